#!/bin/sh
# Record the live references of this host:
#   tests/scripts/update-expected.sh NAME [BUILD_DIR]      (default: build)
# writes expected/NAME/profile.json (`vmalock host --json`: what this
# kernel does) and, for every NAME.ops here, expected/NAME/SCRIPT.maps (what
# `vmalock replay SCRIPT.ops --target live` prints: the script range,
# normalised), SCRIPT.smaps and SCRIPT.numa_maps (the same with --view).
# Name a set after what sets its host apart (e.g. zeropage-pkeys). Review
# the diff before committing: these files are what the model must reproduce
# on any host with the same profile (tests/cli/check-expected.sh).
set -eu
[ $# -ge 1 ] || { echo "usage: $0 NAME [BUILD_DIR]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
name=$1
build=${2:-"$here/../../build"}
vmalock="$build/vmalock"
[ -x "$vmalock" ] || { echo "no $vmalock: build first" >&2; exit 2; }
out="$here/expected/$name"
mkdir -p "$out"
"$vmalock" host --json "$out/profile.json" >/dev/null
# The kernel's LRU batches are per CPU: keep each replay on one CPU.
pin=
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
# Something else on the host can disturb a run (DAMON marks sampled pages
# young: Referenced): each view is recorded until two runs agree (at most 5).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$here"/*.ops; do
	n=$(basename "$f" .ops)
	for view in maps smaps numa_maps; do
		$pin "$vmalock" replay "$f" --target live --view "$view" > "$tmp/0" || exit 1
		agreed=no
		for i in 1 2 3 4; do
			$pin "$vmalock" replay "$f" --target live --view "$view" > "$tmp/$i" || exit 1
			for j in $(seq 0 $((i - 1))); do
				if cmp -s "$tmp/$j" "$tmp/$i"; then
					cp "$tmp/$i" "$out/$n.$view"
					agreed=yes
					break 2
				fi
			done
		done
		[ $agreed = yes ] || { echo "$n.$view: no two of 5 runs agree" >&2; exit 1; }
	done
done
echo "recorded $(ls "$here"/*.ops | wc -l) scripts in $out"
