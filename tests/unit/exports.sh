#!/bin/sh
# exports.sh LIBVMALOCK INCLUDE_DIR: the shared library (.so) or the static
# archive (.a) exports exactly the functions the public headers declare
# (src/libvmalock.sym), nothing internal (allocation, RCU, test hooks...)
# and nothing missing; the archive has no global without the vml_ prefix,
# so nothing in it can collide with a user's names. TAP.
set -u
lib=$1 inc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Defined, exported functions and data (not the version node itself).
case $lib in
*.a) nm -g --defined-only "$lib" ;;
*) nm -D --defined-only "$lib" ;;
esac | awk 'NF == 3 && $2 ~ /^[A-Za-z]$/ && $2 != "A" { sub(/@.*/, "", $3); print $3 }' |
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
case $lib in
*.a)
	n=$((n + 1))
	other=$(grep -v '^vml_' "$tmp/exported")
	if [ -z "$other" ]; then
		echo "ok $n - no global without the vml_ prefix in the archive"
	else
		echo "not ok $n - globals without the vml_ prefix: $(echo $other)"
		failed=1
	fi
	;;
esac
echo "1..$n"
exit $failed
