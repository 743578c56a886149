#!/bin/sh
# Install what vmalock needs to build, test and plot, from Debian's packages.
# Idempotent: installs only what is missing; safe to run on every `make`.
set -eu

PKGS="meson ninja-build pkg-config gcc clang libclang-rt-dev liburcu-dev libjansson-dev zlib1g-dev
      libtracefs-dev libtraceevent-dev gnuplot-nox python3 util-linux"

# The monitoring tools `vmalock bench monitor` runs against its mapper, and strace,
# which observes what they read of /proc. Best effort: a tool that cannot be
# installed is skipped by the benchmark with a one-line reason.
TOOLS="procps smem htop atop sysstat prometheus-process-exporter strace"

# The real programs tests/cli/twin.sh twins (`vmalock twin`): a JVM, PostgreSQL
# with pgbench, memcached. Best effort, like TOOLS: a test whose program is
# missing is skipped with the reason. Their services are not started either.
PROGRAMS="default-jre-headless postgresql postgresql-contrib memcached"

missing_in() {
	for p in $1; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
			printf ' %s' "$p"
		fi
	done
}
missing=$(missing_in "$PKGS")
missing_tools=$(missing_in "$TOOLS")
missing_programs=$(missing_in "$PROGRAMS")
[ -z "$missing" ] && [ -z "$missing_tools" ] && [ -z "$missing_programs" ] && exit 0

echo "install-deps: installing:$missing$missing_tools$missing_programs" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
[ -z "$missing_tools" ] && [ -z "$missing_programs" ] && exit 0

# atop, sysstat, prometheus-process-exporter, postgresql and memcached ship
# services. None may run: a resident atop or exporter reads every process's
# /proc files, the benchmarks' mapper's too; a resident server would be
# twinned in place of the test's own. While they install, a policy-rc.d refuses every service start
# (unless the machine has its own); afterwards the services of the packages
# installed now are disabled (an operator's own, installed before, are left alone).
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
	own_policy=1
	printf '#!/bin/sh\n# vmalock install-deps: no service starts while installing\nexit 101\n' |
		$SUDO tee "$policy" >/dev/null
	$SUDO chmod 755 "$policy"
	trap '$SUDO rm -f "$policy"' EXIT
fi
# shellcheck disable=SC2086
if [ -n "$missing_tools" ] &&
   ! $SUDO apt-get install -y -qq --no-install-recommends $missing_tools >/dev/null; then
	echo "install-deps: some monitoring tools did not install; vmalock bench monitor skips them" >&2
fi
# A group of its own, so that one failing leaves the other installed.
# shellcheck disable=SC2086
if [ -n "$missing_programs" ] &&
   ! $SUDO apt-get install -y -qq --no-install-recommends $missing_programs >/dev/null; then
	echo "install-deps: some programs did not install; tests/cli/twin.sh skips them" >&2
fi
[ -n "$own_policy" ] && $SUDO rm -f "$policy"
for unit in atop atopacct atop-rotate.timer sysstat prometheus-process-exporter postgresql memcached; do
	pkg=${unit%%.*}
	case $unit in atopacct|atop-rotate.timer) pkg=atop ;; esac
	case " $missing_tools $missing_programs " in *" $pkg "*) ;; *) continue ;; esac
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		$SUDO systemctl disable --now "$unit" >/dev/null 2>&1 || true
	elif [ -x "/etc/init.d/$unit" ]; then
		$SUDO "/etc/init.d/$unit" stop >/dev/null 2>&1 || true
		$SUDO update-rc.d "$unit" disable >/dev/null 2>&1 || true
	fi
done
exit 0
