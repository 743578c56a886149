#!/bin/sh
# libvmalock-static.sh OUT.a SYMFILE ARCHIVE OBJCOPY AR CC...: the installed
# static libvmalock.a, which exports what the shared library does and no
# more. ARCHIVE (the core's internals) is linked into one relocatable object
# (CC -r), whose globals are then made local but for the functions listed
# in SYMFILE (libvmalock.sym's "global:" part): the internals (down_read,
# folio_get, seq_read, vml_malloc...) resolve inside that object and cannot
# collide with a user's symbols. Undefined symbols (libc, liburcu) stay
# global. tests/unit/exports.sh checks the result.
set -eu
out=$1 sym=$2 archive=$3 objcopy=$4 ar=$5
shift 5
tmp=$out.tmp
rm -rf "$tmp" "$out"
mkdir "$tmp"
sed -n 's/^[[:space:]]*\(vml_[a-z0-9_]*\);[[:space:]]*$/\1/p' "$sym" >"$tmp/keep"
[ -s "$tmp/keep" ] || { echo "$0: no vml_ symbol in $sym" >&2; exit 1; }
"$@" -r -nostdlib -o "$tmp/all.o" -Wl,--whole-archive "$archive" -Wl,--no-whole-archive
"$objcopy" --keep-global-symbols="$tmp/keep" "$tmp/all.o" "$tmp/vmalock.o"
"$ar" rcsD "$out" "$tmp/vmalock.o"
rm -rf "$tmp"
