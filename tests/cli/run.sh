#!/bin/sh
# run.sh COMMAND ARGS...: run a command built outside this directory.
exec "$@"
