#!/bin/sh
# Install what vmalock needs to build, test and plot, from Debian's packages.
# Idempotent: installs only what is missing; safe to run on every `make`.
set -eu

PKGS="meson ninja-build pkg-config gcc clang libclang-rt-dev liburcu-dev libjansson-dev zlib1g-dev
      libtracefs-dev libtraceevent-dev gnuplot-nox python3 util-linux"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
