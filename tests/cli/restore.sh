#!/bin/sh
# restore.sh VMALOCK: what vmalock changes system-wide comes back however it
# ends - a THP mode set with `host --set` when vmalock is SIGKILLed under
# it, a script's swap file and its THP knobs when replay is SIGKILLed
# mid-script (and the knobs when it ends normally), temporary
# directories when a benchmark is interrupted, and a stale swap file of a
# dead run found and removed at the next start. TAP. Needs root (77 if not).
set -u
vmalock=$1
thp=/sys/kernel/mm/transparent_hugepage/enabled
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root"
	exit 77
fi
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
# This run's swap files in a directory of its own, on disk (the stale-file
# reaper looks there too, through VMALOCK_SWAP_DIR): another run's on the
# machine do not count.
swapdir=$(mktemp -d /var/tmp/vmalock-restore.XXXXXX)
export VMALOCK_SWAP_DIR="$swapdir"
trap 'rm -rf "$tmp" "$swapdir"' EXIT
# wait_for CMD...: up to 60 s for CMD to succeed (a slow disk writes and
# mkswaps a 64 MiB file; the loop ends as soon as CMD does)
wait_for() {
	for _ in $(seq 600); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
ours_on() {
	grep -q "^$swapdir/vmalock-swap\." /proc/swaps
}
no_swap_of_ours() {
	! ours_on && ! ls "$swapdir" | grep -q '^vmalock-swap\.'
}

before=$(cat "$thp")
other=never
[ "$before" = "always madvise [never]" ] && other=always
"$vmalock" host --set thp=$other -- sh -c 'kill -9 $PPID; sleep 1' >/dev/null 2>&1
wait_for sh -c "[ \"\$(cat $thp)\" = \"$before\" ]"
ok $? "THP mode restored after vmalock was SIGKILLed under host --set"

# Nested `host --set`: COMMAND runs vmalock, which changes the same knob (or
# another) again. Whichever of them is SIGKILLed, and when, each knob ends at
# the value it had before the outer run. A case's processes (both vmalocks,
# COMMAND, the keepers) carry VMALOCK_RESTORE_TAG in their environment: the
# case is over when none is left, and only then is the value checked (a
# wrong value may come after a right one).
shm=/sys/kernel/mm/transparent_hugepage/shmem_enabled
s64=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/shmem_enabled
sel() { sed 's/.*\[\(.*\)\].*/\1/' "$1"; }
# The values before and after are read under the system lock: another run's
# temporary values are not ours to expect.
lockf=/run/lock/vmalock.lock
[ -w /run/lock ] || lockf=/tmp/vmalock.lock
lsel() { flock "$lockf" sed 's/.*\[\(.*\)\].*/\1/' "$1"; }
# two words for $1's file, other than its current one
others() {
	cur=$(sel "$1")
	for w in force always within_size advise never; do
		[ "$w" != "$cur" ] && grep -qw "$w" "$1" && printf '%s ' "$w"
	done | cut -d' ' -f1-2
}
tag_gone() {
	! grep -qsz "^VMALOCK_RESTORE_TAG=$tag\$" /proc/[0-9]*/environ
}
# nested CASE OUTER_SETS INNER -- INNER_ARGS...: run
#   vmalock host OUTER_SETS -- sh -c 'vmalock INNER_ARGS; touch done; wait for go'
# (the inner's own COMMAND, if any, is `sh -c 'touch inner; wait for go2'`);
# CASE says what to kill once the inner run has set its knobs:
#   outer         the outer vmalock; then the inner's COMMAND ends normally
#   inner         the inner vmalock; then the outer's COMMAND ends normally
#   both          both at once
#   inner-done    the inner ends normally, then the outer is killed
# Leaves the pids in $tmp/n/{outer,inner}.
nested() {
	case_=$1 osets=$2
	shift 3
	d=$tmp/n
	rm -rf "$d" && mkdir "$d"
	tag=$$.$case_.$n
	VMALOCK_RESTORE_TAG=$tag "$vmalock" host $osets -- sh -c '
		d=$1; shift
		"$@" &
		echo $! > "$d/inner"
		wait $!
		touch "$d/done"
		while [ ! -e "$d/go" ]; do sleep 0.1; done' sh "$d" "$vmalock" "$@" \
		>/dev/null 2>&1 &
	echo $! > "$d/outer"
}
# The inner run's own COMMAND: says it runs, then waits for go2 (60 s at most).
inner_cmd='touch "$D/inner-on"; for i in $(seq 600); do [ -e "$D/go2" ] && break; sleep 0.1; done'
run_case() {
	case_=$1
	d=$tmp/n
	wait_for test -e "$d/inner-on"
	on=$?
	outer=$(cat "$d/outer") inner=$(cat "$d/inner")
	case $case_ in
	outer) kill -9 "$outer"; wait_for sh -c "! kill -0 $outer 2>/dev/null"; touch "$d/go2" "$d/go" ;;
	# the killed inner's COMMAND, orphaned, ends at go2 too (else it waits 60 s)
	inner) kill -9 "$inner"; touch "$d/go2" "$d/go" ;;
	both) kill -9 "$inner" "$outer" 2>/dev/null; touch "$d/go2" "$d/go" ;;
	inner-done) touch "$d/go2"; wait_for test -e "$d/done"; kill -9 "$outer"; touch "$d/go" ;;
	esac
	wait "$outer" 2>/dev/null
	wait_for tag_gone
	return $(( on || $? ))
}
if [ -w "$shm" ]; then
	sbefore=$(lsel "$shm")
	set -- $(others "$shm")
	sa=$1 sb=$2
	for c in outer inner both inner-done; do
		export D="$tmp/n"
		sbefore=$(lsel "$shm")
		nested $c "--set thp_shmem=$sa" -- host --set thp_shmem=$sb -- sh -c "$inner_cmd"
		run_case $c
		ran=$?
		now=$(lsel "$shm")
		[ $ran -eq 0 ] && [ "$now" = "$sbefore" ]
		ok $? "nested host --set thp_shmem=$sa, thp_shmem=$sb, $c SIGKILLed: $sbefore again (is $now)"
	done
	if [ -w "$s64" ]; then
		set -- $(others "$s64")
		for c in outer both; do
			sbefore=$(lsel "$shm") s64before=$(lsel "$s64")
			nested $c "--set thp_shmem=$sa" -- host --set hugepages-64kB.shmem=$1 \
				--set thp_shmem=$sb -- sh -c "$inner_cmd"
			run_case $c
			ran=$?
			now="$(lsel "$shm") $(lsel "$s64")"
			[ $ran -eq 0 ] && [ "$now" = "$sbefore $s64before" ]
			ok $? "nested host --set, other knobs inside, $c SIGKILLed: $sbefore $s64before again (is $now)"
		done
	else
		ok 0 "# SKIP no hugepages-64kB/shmem_enabled"
		ok 0 "# SKIP no hugepages-64kB/shmem_enabled"
	fi
	# A replay whose script has `knobs`, under host --set of the same knob.
	{ echo "knobs thp_shmem=$sb"; echo "mmap 0x100000000000 16M rw- private,anon";
	  for i in $(seq 2000); do echo "touch 0x100000000000 16M write";
	  echo "madvise 0x100000000000 16M dontneed"; done; } > "$tmp/nk.ops"
	for c in outer both; do
		sbefore=$(lsel "$shm")
		nested $c "--set thp_shmem=$sa" -- replay "$tmp/nk.ops" --target live
		wait_for grep -q "\[$sb\]" "$shm" && touch "$tmp/n/inner-on"
		outer=$(cat "$tmp/n/outer") inner=$(cat "$tmp/n/inner")
		# outer: the replay is killed after the outer (it would run on for long)
		[ $c = outer ] && { kill -9 "$outer"; wait_for sh -c "! kill -0 $outer 2>/dev/null"; }
		run_case both
		ran=$?
		now=$(lsel "$shm")
		[ $ran -eq 0 ] && [ "$now" = "$sbefore" ]
		ok $? "replay with knobs thp_shmem=$sb under host --set thp_shmem=$sa, $c SIGKILLed: $sbefore again (is $now)"
	done
else
	for i in 1 2 3 4 5 6 7 8; do ok 0 "# SKIP no shmem_enabled"; done
fi

# A long script with swap: kill vmalock while its swap file is on.
{ echo "swap 64M"; echo "mmap 0x100000000000 16M rw- private,anon";
  for i in $(seq 400); do echo "touch 0x100000000000 16M write";
  echo "madvise 0x100000000000 16M pageout"; done; } > "$tmp/long.ops"
"$vmalock" replay "$tmp/long.ops" --target live >/dev/null 2>&1 &
pid=$!
wait_for ours_on
on=$?
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
wait_for no_swap_of_ours
ok $(( on || $? )) "a SIGKILLed replay's swap file is turned off and deleted"

# A long script with knobs: kill vmalock while its 64 KiB mTHP knob is set.
k64=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
if [ -w "$k64" ]; then
	kbefore=$(cat "$k64")
	kother=always
	case $kbefore in *"[always]"*) kother=never ;; esac
	{ echo "knobs hugepages-64kB=$kother"; echo "mmap 0x100000000000 16M rw- private,anon";
	  for i in $(seq 400); do echo "touch 0x100000000000 16M write";
	  echo "madvise 0x100000000000 16M dontneed"; done; } > "$tmp/knobs.ops"
	"$vmalock" replay "$tmp/knobs.ops" --target live >/dev/null 2>&1 &
	pid=$!
	wait_for grep -q "\[$kother\]" "$k64"
	set=$?
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	wait_for sh -c "[ \"\$(cat $k64)\" = \"$kbefore\" ]"
	ok $(( set || $? )) "a SIGKILLed replay's THP knobs are put back"
	printf 'knobs hugepages-64kB=%s\nmmap 0x100000000000 64K rw- private,anon\n' $kother \
		> "$tmp/k.ops"
	"$vmalock" replay "$tmp/k.ops" --target live >/dev/null 2>&1
	[ "$(cat "$k64")" = "$kbefore" ]
	ok $? "a replay's THP knobs are put back when it ends"
else
	ok 0 "# SKIP no hugepages-64kB/enabled"
	ok 0 "# SKIP no hugepages-64kB/enabled"
fi

# A stale swap file of a dead run (pid 2^22 - 1 is not a live process here).
dead=4194303
kill -0 $dead 2>/dev/null && dead=4194302
stale=$swapdir/vmalock-swap.$dead.0
dd if=/dev/zero of=$stale bs=1M count=4 status=none && chmod 600 $stale && mkswap -q $stale >/dev/null 2>&1 && swapon $stale
printf 'swap 4M\nmmap 0x100000000000 4K rw- private,anon\n' > "$tmp/s.ops"
"$vmalock" replay "$tmp/s.ops" --target live >/dev/null 2>&1
! grep -q "$stale" /proc/swaps && [ ! -e $stale ]
ok $? "a stale swap file of a dead run is found and removed at the next start"

# A benchmark interrupted (SIGINT, SIGTERM, SIGHUP) leaves no temporary
# directory. Its directories go to private places (VMALOCK_TMPDIR,
# VMALOCK_SHMDIR), so other runs' directories do not count. A background job
# of a shell starts with SIGINT ignored: python puts the default back, as a
# terminal's Ctrl-C would find it.
mkdir -p "$tmp/t" /dev/shm/vmalock-restore.$$
for sig in INT TERM HUP; do
	VMALOCK_TMPDIR="$tmp/t" VMALOCK_SHMDIR=/dev/shm/vmalock-restore.$$ python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$vmalock" bench proc-vs-map --target live --duration 30 \
		--samples 1 --readers 0 --quiet >/dev/null 2>&1 &
	pid=$!
	# Until it made its directories (it may first wait for the live-kernel lock).
	wait_for sh -c "ls '$tmp/t' | grep -q ." || wait_for sh -c "ls '$tmp/t' | grep -q ."
	made=$?
	kill -$sig $pid
	wait $pid 2>/dev/null
	wait_for sh -c "! find '$tmp/t' /dev/shm/vmalock-restore.$$ -mindepth 1 | grep -q ."
	ok $(( made || $? )) "bench interrupted by SIG$sig leaves no /tmp or /dev/shm directory"
done
rmdir /dev/shm/vmalock-restore.$$
done_tap
