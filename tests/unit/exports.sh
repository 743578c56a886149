#!/bin/sh
# exports.sh LIBVMALOCK.so INCLUDE_DIR: the shared library exports exactly the
# functions the public headers declare (src/libvmalock.sym), nothing internal
# (allocation, RCU, test hooks...) and nothing missing. TAP.
set -u
lib=$1 inc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Defined, exported functions and data (not the version node itself).
nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWDdBbRr]$/ { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$tmp/exported"
grep -ohE '\bvml_[a-z0-9_]+[[:space:]]*\(' "$inc"/*.h | sed 's/[[:space:]]*($//' | sort -u \
	>"$tmp/declared"
n=0
failed=0
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
n=$((n + 1))
if [ -z "$extra" ]; then
	echo "ok $n - nothing exported beyond include/vmalock/ ($(wc -l <"$tmp/exported") symbols)"
else
	echo "not ok $n - exported but not public: $(echo $extra)"
	failed=1
fi
n=$((n + 1))
if [ -z "$missing" ]; then
	echo "ok $n - every public function is exported"
else
	echo "not ok $n - declared but not exported: $(echo $missing)"
	failed=1
fi
echo "1..$n"
exit $failed
