#!/bin/sh
# race.sh VMALOCK: `vmalock race` - usage errors, the model clean under every
# modification and both lock policies, a deliberately broken reader caught
# (exit 1), the live kernel's fake gaps reproduced on the model with
# --kernel-transients and removed by --lock vma-strict, and the live kernel
# run for every view (its findings are a report: exit 0 or 1, never a crash
# or a usage error). TAP output.
# VML_RACE_SECONDS scales the runs (default 3).
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
secs=${VML_RACE_SECONDS:-3}
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

expect 2 "view: unknown view 'bogus'" "bad --view named" -- race --view maps,bogus
expect 2 "lock: unknown policy 'rcu'" "bad --lock named" -- race --lock rcu
expect 2 "mod: unknown modification 'shuffle'" "bad --mod named" -- race --mod shuffle
expect 2 "duration: bad value '0'" "zero --duration" -- race --duration 0
expect 2 "target: unknown target 'both'" "race takes one target" -- race --target both
expect 2 "broken: unknown value 'skip-everything'" "bad --broken named" -- race --broken skip-everything
expect 2 "broken breaks the model's reader" "--broken on the live kernel" -- race --broken skip-fallback --target live
expect 2 "readers: bad value" "zero readers" -- race --readers 0
expect 2 "lock: bad value 'vma,'" "empty --lock item" -- race --lock vma,
expect 2 "kernel-transients changes the model" "--kernel-transients on the live kernel" -- race --kernel-transients --target live
expect 2 "noise changes the model" "--noise on the live kernel" -- race --noise 5 --target live
expect 2 "noise: bad value 'x'" "bad --noise" -- race --noise x
expect 2 "unexpected argument 'maps'" "a stray argument" -- race maps
expect 2 "dontneed checks smaps, smaps_rollup and numa_maps only" "dontneed on maps" -- race --view maps,query --mod dontneed

vml race --help
[ $? -eq 0 ] && grep -q -- '--broken' out && grep -q -- '--view' out
ok $? "race --help"

# The model: no violation, every modification, both policies, maps and query.
vml race --target model --view maps,query --lock both --duration "$secs" --seed 1
rc=$?
[ $rc -eq 0 ] && grep -q '^total: [0-9]* reads, 0 violations' out &&
	[ "$(grep -c '^maps \|^query ' out)" -eq 24 ]
ok $? "model, maps and query, both policies, all modifications: no violation (exit $rc)"

# `all` on the model: views it does not offer yet are skipped with a note.
vml race --target model --view all --lock vma --mod split --duration 1 --seed 2
rc=$?
[ $rc -eq 0 ] && grep -q '^total: .* 0 violations' out &&
	{ ! grep -q '^note: ' out || grep -q '^note: .* skipped: the model target has no such view' out; }
ok $? "model, --view all: runs what the model offers, notes the rest (exit $rc)"

# race_until "SEEDS" ARGS...: vml race ARGS --seed S for each of SEEDS until a
# run exits other than 0 (what it found); $rc and $seed say which run that was.
race_until() {
	seeds=$1
	shift
	for seed in $seeds; do
		vml race "$@" --seed "$seed"
		rc=$?
		[ $rc -eq 0 ] || break
	done
}

# A reader that skips the VMAs it cannot lock must be caught within seconds.
# It is caught only when it meets a write-locked VMA, which a loaded machine
# (other builds, other tests) can make rare in one short run: up to five runs.
race_until "3 13 23 33 43" --target model --view maps --lock vma --broken skip-fallback \
	--duration "$secs"
[ $rc -eq 1 ] && grep -q '^first violation (maps/vma/' out && grep -q '^>> ' out
ok $? "model, --broken skip-fallback: caught (exit $rc, seed $seed)"

# The live kernel's fake and transient gaps (docs/findings/maps-fake-gaps.md),
# on the model by choice: with --kernel-transients (and the reader held up
# where an interrupt holds the kernel's, --noise 50 by default) the 6.18
# reader shows each kind; each kind gets up to five runs, as a loaded machine
# can make one short run miss.
for mod in split mprotect remap remap-whole; do
	race_until "6 16 26 36 46" --target model --view maps --lock vma --kernel-transients \
		--mod $mod --duration "$secs"
	[ $rc -eq 1 ] && grep -q "^maps  *vma  *$mod  *[0-9]* *[0-9]* *[0-9]* *[0-9]* *[1-9]" out &&
		grep -q '^  fake-gap: [1-9]' out
	ok $? "model, --kernel-transients, maps, $mod: fake gaps shown (exit $rc, seed $seed)"
	grep '^total:' out | sed 's/^/# /'
done
race_until "7 17 27 37 47" --target model --view query --lock vma --kernel-transients \
	--mod remap-whole --duration "$secs"
[ $rc -eq 1 ] && grep -q '^  fake-gap: [1-9]' out
ok $? "model, --kernel-transients, query, remap-whole: the destination hole shown (exit $rc)"
# ... and none without the option, even with the reader held up the same way,
vml race --target model --view maps,query --lock vma --noise 50 --duration "$secs" \
	--seed 8
rc=$?
[ $rc -eq 0 ] && grep -q '^total: [0-9]* reads, 0 violations' out
ok $? "model, --noise without --kernel-transients: no violation (exit $rc)"
grep '^total:' out | sed 's/^/# /'
# ... and none with the reader-side fix, even with the option.
vml race --target model --view maps,query --lock vma-strict --kernel-transients \
	--duration "$secs" --seed 9
rc=$?
[ $rc -eq 0 ] && grep -q '^total: [0-9]* reads, 0 violations' out &&
	[ "$(grep -c '^maps  *vma-strict \|^query  *vma-strict ' out)" -eq 12 ]
ok $? "model, --kernel-transients, --lock vma-strict: no violation (exit $rc)"
grep '^total:' out | sed 's/^/# /'
# vma-recheck (every gap looked up again) removes case 1 but not the hole.
vml race --target model --view maps --lock vma-recheck --kernel-transients \
	--mod split,mprotect,remap --duration "$secs" --seed 10
rc=$?
[ $rc -eq 0 ] && grep -q '^total: [0-9]* reads, 0 violations' out
ok $? "model, --kernel-transients, --lock vma-recheck: no fake gap after a merge (exit $rc)"
race_until "11 21 31 41 51" --target model --view maps --lock vma-recheck --kernel-transients \
	--mod remap-whole --duration "$secs"
[ $rc -eq 1 ] && grep -q '^  fake-gap: [1-9]' out
ok $? "model, --kernel-transients, --lock vma-recheck: the mremap hole still shown (exit $rc)"

# The page-walking views under both policies, every modification (the
# kernel selftest's smaps tearing variants and pagewalk_race_test's dontneed
# among them): no violation. Under per-VMA locks RCU is dropped around each
# walk and the iterator reset afterwards. (Skipping the reset,
# VML_BROKEN_SKIP_RESET, loses only VMAs mapped into a gap during a walk: the
# reader then shows an earlier, real state, which no state contract can tell
# from a correct read; tests/unit/test-smaps-lock.c catches it
# deterministically instead.)
vml race --target model --view smaps,numa_maps,smaps_rollup --lock both --duration "$secs" --seed 4
rc=$?
[ $rc -eq 0 ] && grep -q '^total: .* 0 violations' out &&
	[ "$(grep -c '^\(smaps\|smaps_rollup\|numa_maps\)  *\(mmap\|vma\)  *[a-z-]*  *[0-9]' out)" -eq 42 ] &&
	[ "$(grep -c ' dontneed  ' out)" -eq 6 ]
ok $? "model, smaps, numa_maps, smaps_rollup, both policies, all modifications: no violation (exit $rc)"
grep '^total:' out | sed 's/^/# /'

# ... and each check fails when what it guards is broken on purpose, under
# both policies. pagewalk_race_test's bug (a walk that meets an emptied page
# table walks the range again) double-counts the first PMD in every read
# that meets the second one emptied: each phase catches it.
race_until "12 22 32" --target model --view smaps,smaps_rollup --mod dontneed --lock both \
	--broken walk-again --duration "$secs"
[ $rc -eq 1 ] && [ "$(grep -c '^  double-count: [1-9]' out)" -eq 4 ] &&
	grep -q '^first violation (smaps.*/dontneed, .*double-count: Rss [0-9]* kB, but no state had more' out
ok $? "model, --broken walk-again: a page counted twice caught under both policies (exit $rc, seed $seed)"
# smaps_rollup resuming inside a VMA that grew across where it stopped (after
# a contended drop, or under per-VMA locks after a merge) must count only
# the new part (seed 002: `vma->vm_start < last_vma_end`); counting it whole
# is caught by the totals, when the race lands there: up to five runs.
for lock in mmap vma; do
	race_until "13 23 33 43 53" --target model --view smaps_rollup --mod mprotect,split \
		--lock $lock --broken rollup-resume --duration "$secs"
	[ $rc -eq 1 ] && grep -q '^  totals: [1-9]' out &&
		grep -q "^first violation (smaps_rollup/$lock/.*counted twice" out
	ok $? "model, --broken rollup-resume, $lock: a VMA counted twice caught (exit $rc, seed $seed)"
done
# A read() that goes on after the record the last read() dropped for lack of
# room tears smaps at every read boundary: caught under both policies.
vml race --target model --view smaps --mod split --lock both --broken seq-resume \
	--duration 1 --seed 14
rc=$?
[ $rc -eq 1 ] && [ "$(grep -c '^smaps  *\(mmap\|vma\)  *split  *[0-9]* *[0-9]* *[0-9]* *[0-9]* *[1-9]' out)" -eq 2 ]
ok $? "model, --broken seq-resume: a record lost at the read boundary caught (exit $rc)"

# The live kernel, pagewalk_race_test: a double count there is a finding
# about the kernel (CONFIG_PT_RECLAIM kernels reclaim the emptied table).
vml race --target live --mod dontneed --duration "$secs" --seed 15
rc=$?
[ $rc -le 1 ] && [ "$(grep -c '^\(smaps\|smaps_rollup\|numa_maps\) *kernel:\(mmap\|vma\)  *dontneed ' out)" -eq 3 ] &&
	! grep -q 'failed:\|stopped early' out
ok $? "live, dontneed: ran (exit $rc: $(grep '^total:' out))"
grep '^total:\|^first violation' out | sed 's/^/# /'

# The live kernel: every view runs; violations are findings, not failures.
vml race --target live --view all --mod split,remap --duration "$secs" --seed 5
rc=$?
[ $rc -le 1 ] && [ "$(grep -c '^\(maps\|smaps\|smaps_rollup\|numa_maps\|query\) *kernel:\(mmap\|vma\) ' out)" -eq 10 ] &&
	! grep -q 'failed:\|stopped early' out
ok $? "live, every view: ran (exit $rc: $(grep '^total:' out))"
grep '^total:\|^first violation' out | sed 's/^/# /'

done_tap
