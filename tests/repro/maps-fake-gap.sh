#!/bin/sh
# maps-fake-gap.sh PROGRAM: the standalone reproducer's usage errors (exit 2,
# one line naming the bad argument) and a short run of every kind (exit 0
# whatever it finds, one summary line per kind and a total). Its findings are
# copied into the log as TAP comments. TAP output.
# VML_REPRO_SECONDS sets the seconds per kind (default 1).
set -u
prog=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
secs=${VML_REPRO_SECONDS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
n=0
failed=0
kinds="mapfixed mprotect remap remap-over remap-whole resize"

ok() {	# ok COND-EXIT-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		sed 's/^/#   /' out err 2>/dev/null | head -n 40
	fi
}

usage() {	# usage PATTERN DESCRIPTION -- ARGS...: exit 2, one stderr line matching
	pattern=$1 desc=$2
	shift 3
	"$prog" "$@" >out 2>err
	rc=$?
	[ $rc -eq 2 ] && grep -q -- "$pattern" err && [ "$(wc -l <err)" -eq 1 ]
	ok $? "$desc (exit $rc)"
}

usage "--kind: unknown kind 'bogus'" "bad --kind named" -- --kind bogus
usage "--duration: bad number of seconds '0'" "zero --duration" -- --duration 0
usage "--duration: bad number of seconds '2x'" "--duration not a number" -- --duration 2x
usage "--examples: bad count '99'" "too many --examples" -- --examples 99
usage "--kind: needs a value" "--kind without a value" -- --kind
usage "unexpected argument 'maps'" "a stray argument" -- maps
usage "--noise: bad number of microseconds '-1'" "negative --noise" -- --noise -1

"$prog" --help >out 2>err
[ $? -eq 0 ] && grep -q -- '--kind' out && grep -q -- 'remap-whole' out
ok $? "--help"

"$prog" --duration "$secs" --query >out 2>err
rc=$?
good=$([ $rc -eq 0 ] && echo 0 || echo 1)
for k in $kinds; do
	grep -q "^kind $k: .* fake gaps [0-9]* (.*/min), transient gaps [0-9]*" out || good=1
done
grep -q '^total: fake gaps [0-9]*, transient gaps [0-9]*, other [0-9]*, query misses [0-9]*$' out ||
	good=1
ok $good "every kind runs $secs s with --query and prints its counts (exit $rc)"
# The findings, for the log: a gap found is about the kernel, not a failure.
grep -v '^maps-fake-gap: ' out | sed 's/^/# /'

echo "1..$n"
[ $failed -eq 0 ]
