#!/bin/sh
# vmalock-fuzz.sh VMALOCK KNOWN: a short differential fuzz run (model against
# the live kernel). Differences listed in KNOWN (the model bugs found so far,
# tests/scripts/fuzz-found/) are counted but do not fail the test; any other
# difference does, and its minimal script is printed.
# VML_SEED (default 1) and VML_FUZZ_RUNS (default 300) change the run.
set -u
vmalock=$1 known=$2
seed=${VML_SEED:-1}
runs=${VML_FUZZ_RUNS:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "seed $seed (replay with VML_SEED=$seed)"
"$vmalock" fuzz --seed "$seed" --runs "$runs" --ops 20 --known "$known" --save "$tmp" \
	--max-failures 3
rc=$?
for f in "$tmp"/*.ops; do
	[ -f "$f" ] || continue
	echo "== $f"
	cat "$f"
done
exit $rc
