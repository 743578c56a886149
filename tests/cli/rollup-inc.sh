#!/bin/sh
# rollup-inc.sh VMALOCK SCRIPTS-DIR: the incremental smaps_rollup (--rollup
# incremental: sums kept as page tables change, read without a walk) gives
# the walked rollup's bytes on every corpus op script, and --rollup check
# (every process's rollup compared both ways after every op) finds no
# difference; fuzz --rollup-check runs clean with fork and swap. TAP output.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$2
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

expect 2 "rollup" "--rollup bad" -- replay "$dir/fork.ops" --rollup sideways
total=0 differ=0 checked=0 first= firstcheck=
for s in "$dir"/*.ops "$dir"/fuzz-found/*.ops; do
	[ -f "$s" ] || continue
	total=$((total + 1))
	vml replay "$s" --target model --view smaps_rollup --rollup walk
	ra=$?; cp out a.out
	vml replay "$s" --target model --view smaps_rollup --rollup incremental
	rb=$?
	if [ $ra -ne $rb ] || ! cmp -s a.out out; then
		differ=$((differ + 1))
		[ -n "$first" ] || first=$s
	fi
	vml replay "$s" --target model --view smaps_rollup --rollup check
	if grep -q 'rollup check' err; then
		checked=$((checked + 1))
		[ -n "$firstcheck" ] || firstcheck=$s
	fi
done
[ $total -gt 100 ] && [ $differ -eq 0 ]
ok $? "$total corpus scripts: the same smaps_rollup walked and incremental ($differ differ${first:+, first $first})"
[ $total -gt 100 ] && [ $checked -eq 0 ]
ok $? "$total corpus scripts: --rollup check after every op ($checked differ${firstcheck:+, first $firstcheck})"

# The comparison itself can fail: fork.ops read both ways differs in text
# from a script without the fork, so a cmp that always passed would show here.
vml replay "$dir/fork.ops" --target model --view smaps_rollup --rollup incremental
cp out fork.out
vml replay "$dir/anon-read-write.ops" --target model --view smaps_rollup --rollup incremental
! cmp -s fork.out out
ok $? "the byte comparison tells two different rollups apart"

vml fuzz --rollup-check --seed 25 --runs 300 --swap 16M --save "$tmp/saved"
rc=$?
grep -q '^fuzz --rollup-check: 300 runs, .* 0 differences (' out
ok $(( rc | $? )) "fuzz --rollup-check: 300 sequences with fork and swap, no difference"
done_tap
