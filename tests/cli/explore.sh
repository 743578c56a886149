#!/bin/sh
# explore.sh VMALOCK COSTS: `vmalock race --cpus N --explore K` - the
# model's race on the simulated machine, schedules explored: planted
# breakages are found (skip-reset by the temporal check: the layout at each
# lookup), each printed with the seed that replays it, and the replay shows
# the same violation after the same reads; the unbroken model stays clean. COSTS: a saved table of charges (tests/cli/data). TAP output.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
costs=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

expect 2 "explore: needs --cpus N" "--explore without a simulated machine" -- race --explore 4
expect 2 "sim-seed: needs --cpus N" "--sim-seed without a simulated machine" -- race --sim-seed 3
expect 2 "cpus simulates the model" "--cpus on the live kernel" -- race --cpus 2 --target live
expect 2 "explore-mode: unknown mode 'dfs'" "a bad exploration mode is named" -- \
	race --cpus 2 --explore 2 --explore-mode dfs

# found BREAKAGE MODE ARGS...: race finds the breakage, and its printed
# replay command shows the same first violation after the same reads.
found() {
	what=$1 mode=$2
	shift 2
	vml race --cpus 2 --explore 10 --explore-mode "$mode" --broken "$what" \
		--sim-costs "$costs" --seed 5 "$@"
	rc=$?
	line=$(grep -m1 '^  found in schedule' out)
	first=$(grep -m1 '^first violation' out)
	[ $rc -eq 1 ] && [ -n "$line" ] && [ -n "$first" ]
	ok $? "--broken $what ($mode): found ($line)"
	replay=$(printf '%s\n' "$line" | sed 's/.*replay: vmalock //')
	# shellcheck disable=SC2086 # the printed command's words
	vml $replay
	rc=$?
	# the same violation after the same reads of its schedule, the same command
	[ $rc -eq 1 ] && [ "$(grep -m1 '^first violation' out)" = "$first" ] &&
		[ "$(grep -m1 '^  found in schedule' out | sed 's/.*; \([0-9]*\) in that.*/\1/')" = \
		  "$(printf '%s\n' "$line" | sed 's/.*; \([0-9]*\) in that.*/\1/')" ] &&
		[ "$(grep -m1 '^  found in schedule' out | sed 's/.*; replay: //')" = \
		  "$(printf '%s\n' "$line" | sed 's/.*; replay: //')" ]
	ok $? "--broken $what ($mode): its seed replays it exactly"
}

# lock_next_vma skipping a VMA it cannot lock: a fake gap under per-VMA locks
found skip-fallback pct --view maps --lock vma --mod split --duration 1
found skip-fallback random --view maps --lock vma --mod split --duration 1
# a writer let in beside readers at hand-off: a torn per-read snapshot. From
# --sim-seed 4: some schedules' first violation is a VMA the writer freed
# under the reader (unknown-form, heap addresses), which no replay repeats
found handoff pct --view maps --lock mmap --mod split --readers 4 --duration 0.5 --sim-seed 4
# a page-walking reader resuming from the iterator it walked away from: an
# earlier layout, which only the temporal check tells from a correct read
found skip-reset pct --view smaps --lock vma --mod unmap --duration 1
found skip-reset random --view smaps --lock vma --mod unmap --duration 1
grep -q '^first violation (smaps/vma/unmap, .*: skipped: .* was there, unchanged, all the while' out
ok $? "--broken skip-reset: a VMA skipped at its lookup"

# The model as it is: clean under both policies in every explored schedule,
# its lookups timed too.
vml race --cpus 2 --explore 4 --sim-costs "$costs" --view maps,smaps --mod split,unmap \
	--duration 1 --seed 3
rc=$?
[ $rc -eq 0 ] && grep -q '^total: [0-9]* reads, 0 violations' out &&
	grep -q '^vmalock race: .*, lookups timed (all views but smaps_rollup)$' out
ok $? "the unbroken model: no violation in explored schedules (exit $rc)"
# ... where skip-reset shows, numa_maps and PROCMAP_QUERY, every per-VMA policy
vml race --cpus 2 --explore 3 --explore-mode random --sim-costs "$costs" \
	--view smaps,numa_maps,query --lock vma,vma-strict,vma-recheck --mod unmap \
	--duration 0.5 --seed 3 --sim-seed 7
rc=$?
[ $rc -eq 0 ] && grep -q '^total: [0-9]* reads, 0 violations' out
ok $? "the unbroken model, unmap: no VMA skipped at its lookup (exit $rc)"

done_tap
