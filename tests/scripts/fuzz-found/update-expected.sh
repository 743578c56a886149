#!/bin/sh
# Record the live kernel's output for every script here, as
# tests/scripts/update-expected.sh does for the corpus:
#   tests/scripts/fuzz-found/update-expected.sh [BUILD_DIR]      (default: build)
# expected/NAME.maps is `vmalock replay NAME.ops --target live`, NAME.smaps the
# same with --view smaps; expected/KERNEL names the kernel.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-"$here/../../../build"}
vmalock="$build/vmalock"
[ -x "$vmalock" ] || { echo "no $vmalock: build first" >&2; exit 2; }
mkdir -p "$here/expected"
uname -r | sed -E 's/^([0-9]+\.[0-9]+).*/\1/' > "$here/expected/KERNEL"
for f in "$here"/*.ops; do
	n=$(basename "$f" .ops)
	"$vmalock" replay "$f" --target live > "$here/expected/$n.maps"
	"$vmalock" replay "$f" --target live --view smaps > "$here/expected/$n.smaps"
done
echo "updated $(ls "$here"/*.ops | wc -l) scripts for kernel $(cat "$here/expected/KERNEL")"
