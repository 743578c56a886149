#!/bin/sh
# run.sh COMMAND ARGS...: run a command built outside this directory, on
# one CPU (a live child must not migrate between ops: see check-expected.sh).
if command -v taskset >/dev/null 2>&1; then
	exec taskset -c $(( $$ % $(nproc 2>/dev/null || echo 1) )) "$@"
fi
exec "$@"
