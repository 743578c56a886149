#!/bin/sh
# check-expected.sh VMALOCK SCRIPT EXPECTED [VIEW]
# Replay SCRIPT on the live kernel and compare the printed VIEW (default
# maps) with the reference file EXPECTED. smaps references depend on more
# of the machine (THP mode, protection keys, the kernel's accounting), so
# they are skipped (exit 77) on a kernel other than the one they were
# recorded on (expected/KERNEL).
set -u
vmalock=$1 script=$2 expected=$3 view=${4:-maps}
if [ "$view" != maps ]; then
	rec=$(cat "$(dirname "$expected")/KERNEL" 2>/dev/null || echo none)
	now=$(uname -r | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
	if [ "$rec" != "$now" ]; then
		echo "skip: $view references are from kernel $rec, this is $now"
		exit 77
	fi
fi
# Some page states (LazyFree, active) wait in the kernel's per-CPU LRU
# batches until a later call drains them on the same CPU: keep the live
# child on one CPU (it inherits the affinity), spreading tests over CPUs.
pin=
if command -v taskset >/dev/null 2>&1; then
	pin="taskset -c $(( $$ % $(nproc 2>/dev/null || echo 1) ))"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
$pin "$vmalock" replay "$script" --target live --view "$view" > "$out"
rc=$?
if [ $rc -ne 0 ]; then
	echo "vmalock replay exited $rc"
	exit 1
fi
if ! cmp -s "$expected" "$out"; then
	echo "live $view differs from $expected:"
	diff -u "$expected" "$out"
	exit 1
fi
exit 0
