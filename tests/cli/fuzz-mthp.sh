#!/bin/sh
# fuzz-mthp.sh VMALOCK: `vmalock fuzz --mthp` - a short run with THP knob
# sets drawn (model against the live kernel) finds no difference, draws the
# same sets for the same seed, and leaves every THP sysfs knob as it found
# it; without root it is refused with one line (exit 2). TAP. The knobs are
# system-wide: suite `system`, alone. VML_SEED (1) and VML_FUZZ_RUNS (200)
# change the run.
set -u
vmalock=$1
seed=${VML_SEED:-1}
runs=${VML_FUZZ_RUNS:-200}
thp=/sys/kernel/mm/transparent_hugepage
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
. "$(dirname "$0")/lib.sh"

# every THP knob --mthp may write, with its file's whole line
knobs() {
	for f in "$thp"/enabled "$thp"/shmem_enabled "$thp"/hugepages-*kB/*enabled; do
		[ -f "$f" ] && echo "$f: $(cat "$f")"
	done
}

if [ "$(id -u)" -ne 0 ]; then
	expect 2 "needs root" "--mthp without root is refused" -- fuzz --mthp --runs 1
	done_tap
fi
if ! [ -w "$thp/hugepages-64kB/enabled" ]; then
	echo "1..0 # SKIP no mTHP knobs on this kernel"
	exit 77
fi
knobs >before
vml fuzz --mthp --runs "$runs" --seed "$seed" --save "$tmp/saved" --max-failures 3
rc=$?
grep -q '^fuzz: .*, 0 differences' out
ok $(( rc || $? )) "fuzz --mthp --runs $runs --seed $seed: 0 differences (exit $rc)"
cp out first
grep '^vmalock fuzz: .*(--mthp)$' first >/dev/null && grep -q '^vmalock fuzz: run 0: knobs thp=' first
ok $? "the header says --mthp and the first pair's knob set is printed"
knobs >after
diff before after >&2
ok $? "every THP knob is back as it was"

# The same seed draws the same knob sets (a few sequences, so one or two pairs).
vml fuzz --mthp --runs 2 --seed "$seed" --save "$tmp/saved"
grep '^vmalock fuzz: run 0: knobs ' out >again
grep '^vmalock fuzz: run 0: knobs ' first | cmp -s - again
ok $? "seed $seed draws the same knob set again"
vml fuzz --mthp --runs 2 --seed $((seed + 1)) --save "$tmp/saved"
grep '^vmalock fuzz: run 0: knobs ' out >other
[ -s other ] && ! cmp -s again other
ok $? "seed $((seed + 1)) draws another knob set"
knobs >after
diff before after >&2
ok $? "every THP knob is back as it was after the short runs"
for f in "$tmp"/saved/*.ops; do
	[ -f "$f" ] || continue
	echo "# == $f"
	sed 's/^/# /' "$f"
done
done_tap
