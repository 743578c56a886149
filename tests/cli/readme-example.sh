#!/bin/sh
# readme-example.sh VMALOCK README: the op script in README.md's "Op scripts"
# section runs clean and gives the same maps, smaps and numa_maps on the
# model and the live kernel (what the README says it does).
set -u
vmalock=$1 readme=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The first ``` block after the "### Op scripts" heading.
awk '/^### Op scripts/ { s = 1; next } s == 1 && /^```/ { s = 2; next }
     s == 2 && /^```/ { exit } s == 2 { print }' "$readme" > "$tmp/example.ops"
if [ ! -s "$tmp/example.ops" ]; then
	echo "no example block found in $readme"
	exit 1
fi
# Not exec: the EXIT trap must remove the directory (exec left one a run).
"$vmalock" replay "$tmp/example.ops" --compare maps,smaps,numa_maps
exit $?
