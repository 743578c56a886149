#!/bin/sh
# shmem-smaps-live.sh VMALOCK: `bench shmem-smaps` on the live kernel at a
# small size - a swap file turned on for the run, a shmem file partly pushed
# out to it - checks that the live cases show the Swap the setup made, and
# that afterwards the swap file is off and gone and no temporary directory
# is left. TAP. Needs root (77 if not).
set -u
vmalock=$1
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root"
	exit 77
fi
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
# Its tmpfs files and its swap file in directories of its own (other runs on
# the machine may have theirs meanwhile): VMALOCK_SHMDIR, VMALOCK_SWAP_DIR.
shm=$(mktemp -d /dev/shm/vmalock-smaps-live.XXXXXX)
swapdir=$(mktemp -d /var/tmp/vmalock-smaps-live.XXXXXX)
export VMALOCK_SHMDIR="$shm" VMALOCK_SWAP_DIR="$swapdir"
trap 'rm -rf "$tmp" "$shm" "$swapdir"' EXIT
cd "$tmp" || exit 1

vml bench shmem-smaps --target live --size 16M --stride 1M --reads 2 --samples 1 \
	--json live.json --quiet
rc=$?
[ $rc -eq 0 ] && [ "$(grep -cE '^live +kernel +(private|shared|noswap|anon) ' out)" -eq 4 ]
ok $? "shmem-smaps on the live kernel prints its four cases"
python3 - live.json >err 2>&1 <<'PY'
import json, sys
rows = {r["case"]: r for r in json.load(open(sys.argv[1]))["rows"]}
assert set(rows) == {"private", "shared", "noswap", "anon"}, rows
# 8 of the 16 pages after a dirtied one were pushed out: 32 kB, seen by both swapped cases
assert rows["private"]["swap_kb"] == 32 and rows["shared"]["swap_kb"] == 32, rows
assert rows["noswap"]["swap_kb"] == 0 and rows["anon"]["swap_kb"] == 0, rows
PY
ok $? "the partly swapped cases show the 32 kB pushed out, the others none"
! grep -q "^$swapdir/" /proc/swaps && [ -z "$(ls "$swapdir")" ]
ok $? "the swap file is off and gone afterwards"
[ -z "$(find "$shm" -mindepth 1)" ]
ok $? "its tmpfs files are gone"
done_tap
