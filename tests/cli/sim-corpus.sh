#!/bin/sh
# sim-corpus.sh VMALOCK SCRIPTS-DIR: the functional model is the same on the
# simulated machine - every corpus op script replayed on the model gives the
# same smaps (and exit status) as a task of a 3-CPU simulated machine as on
# a host thread (docs/simulation.md). TAP output.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$2
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

expect 2 "cpus: bad value '0'" "--cpus 0" -- replay "$dir/fork.ops" --cpus 0
total=0 differ=0 first=
for s in "$dir"/*.ops "$dir"/fuzz-found/*.ops; do
	[ -f "$s" ] || continue
	total=$((total + 1))
	vml replay "$s" --target model --view smaps
	ra=$?; cp out a.out
	vml replay "$s" --target model --view smaps --cpus 3
	rb=$?
	if [ $ra -ne $rb ] || ! cmp -s a.out out; then
		differ=$((differ + 1))
		[ -n "$first" ] || first=$s
	fi
done
[ $total -gt 100 ] && [ $differ -eq 0 ]
ok $? "$total corpus scripts: the same smaps on the simulated machine ($differ differ${first:+, first $first})"
done_tap
