#!/bin/sh
# run-fuzzer.sh FUZZER WORKDIR SEEDS... [-- LIBFUZZER-OPTIONS...]
# Run a libFuzzer target for a short while: new inputs go to WORKDIR (made
# if missing, in the build directory), the seed corpus is read from SEEDS
# (directories or files, never written). Exit status: the fuzzer's.
set -u
fuzzer=$1 work=$2
shift 2
mkdir -p "$work" "$work.seeds" || exit 1
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	if [ -d "$1" ]; then
		cp -f "$1"/* "$work.seeds/" 2>/dev/null
	else
		cp -f "$1" "$work.seeds/"
	fi
	shift
done
[ $# -gt 0 ] && shift
exec "$fuzzer" "$work" "$work.seeds" "$@"
