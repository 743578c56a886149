#!/bin/sh
# install.sh BUILD_DIR: `meson install` into a scratch directory puts the
# command in bin/, its helper vmalock-child in libexec/vmalock/ (not bin/),
# and the installed command finds the helper there: a live replay works.
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --destdir "$tmp/root" --no-rebuild --quiet >"$tmp/log" 2>&1 ||
	{ cat "$tmp/log"; exit 1; }
bin=$(find "$tmp/root" -path '*/bin/vmalock' -type f | head -n 1)
child=$(find "$tmp/root" -name vmalock-child -type f | head -n 1)
[ -n "$bin" ] || { echo "no bin/vmalock installed"; exit 1; }
case $child in
*/libexec/vmalock/vmalock-child) ;;
*) echo "vmalock-child installed at '$child', not in libexec/vmalock/"; exit 1 ;;
esac
find "$tmp/root" -path '*/bin/vmalock-child' | grep -q . && { echo "vmalock-child in bin/"; exit 1; }
printf 'mmap 0x100000000000 8K rw- private,anon\ntouch 0x100000000000 4K write\n' >"$tmp/s.ops"
env -u VML_CHILD_EXE "$bin" replay "$tmp/s.ops" --target live >"$tmp/out" 2>&1 ||
	{ cat "$tmp/out"; exit 1; }
grep -q '^100000000000-100000002000 rw-p' "$tmp/out" || { cat "$tmp/out"; exit 1; }
echo "installed: $bin, $child; a live replay works"
