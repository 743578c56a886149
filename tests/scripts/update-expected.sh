#!/bin/sh
# Regenerate the live references in expected/ from the running kernel:
#   tests/scripts/update-expected.sh [BUILD_DIR]      (default: build)
# NAME.maps is what `vmalock replay NAME.ops --target live` prints (the
# script range, normalised); NAME.smaps and NAME.numa_maps the same with
# --view smaps / numa_maps. Review the diff before committing: these files
# are what the model must reproduce.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-"$here/../../build"}
vmalock="$build/vmalock"
[ -x "$vmalock" ] || { echo "no $vmalock: build first" >&2; exit 2; }
uname -r | sed -E 's/^([0-9]+\.[0-9]+).*/\1/' > "$here/expected/KERNEL"
for f in "$here"/*.ops; do
	n=$(basename "$f" .ops)
	"$vmalock" replay "$f" --target live > "$here/expected/$n.maps"
	"$vmalock" replay "$f" --target live --view smaps > "$here/expected/$n.smaps"
	"$vmalock" replay "$f" --target live --view numa_maps > "$here/expected/$n.numa_maps"
done
echo "updated $(ls "$here"/*.ops | wc -l) scripts for kernel $(cat "$here/expected/KERNEL")"
