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
for f in "$here"/*.ops; do
	n=$(basename "$f" .ops)
	for view in maps smaps numa_maps; do
		$pin "$vmalock" replay "$f" --target live --view "$view" > "$out/$n.$view"
	done
done
echo "recorded $(ls "$here"/*.ops | wc -l) scripts in $out"
