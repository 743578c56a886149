#!/bin/sh
# thp-modes.sh VMALOCK SCRIPTS_DIR: the corpus diff (model against the live
# kernel, every view) under each THP mode - always, madvise, never - set with
# `vmalock host --set thp=MODE -- ...`, which holds the system-state lock for
# the run (other live tests wait) and puts the original mode back afterwards,
# also if this test is interrupted or killed (the keeper restores it). TAP.
# Needs root; skipped (77) otherwise.
set -u
vmalock=$1 scripts=$2
thp=/sys/kernel/mm/transparent_hugepage/enabled
if [ "$(id -u)" -ne 0 ] || [ ! -w "$thp" ]; then
	echo "1..0 # SKIP needs root and $thp"
	exit 77
fi
before=$(cat "$thp")
n=0
failed=0
for mode in always madvise never; do
	n=$((n + 1))
	out=$("$vmalock" host --set thp=$mode -- sh -c '
		vmalock=$1 scripts=$2 mode=$3 fails=0
		grep -q "\[$mode\]" /sys/kernel/mm/transparent_hugepage/enabled ||
			{ echo "mode $mode not set"; exit 1; }
		for f in "$scripts"/*.ops; do
			"$vmalock" replay "$f" --target both --compare maps,smaps,numa_maps,query \
				--quiet >out.$$ 2>&1
			rc=$?
			if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
				echo "$(basename "$f"): exit $rc"; head -n 20 out.$$
				fails=$((fails + 1))
			fi
		done
		rm -f out.$$
		exit $fails' sh "$vmalock" "$scripts" "$mode" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok $n - corpus diff under THP $mode"
	else
		echo "not ok $n - corpus diff under THP $mode ($rc scripts differ)"
		echo "$out" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
done
n=$((n + 1))
if [ "$(cat "$thp")" = "$before" ]; then
	echo "ok $n - THP mode restored ($before)"
else
	echo "not ok $n - THP mode is $(cat "$thp"), was $before"
	failed=$((failed + 1))
fi
echo "1..$n"
[ $failed -eq 0 ]
