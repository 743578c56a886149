#!/bin/sh
# twin.sh VMALOCK MANY_VMAS: `vmalock twin PID` (docs/twin.md). Usage errors;
# a reader without permission (as nobody, against a root process); a process
# that exits while being read (twin stopped half-way through smaps, and
# between smaps and pagemap, by VML_TWIN_TEST_STOP); a kernel thread; a
# process with vm.max_map_count VMAs (MANY_VMAS); one with pages in swap (a
# replay's live child, under its script's swap directive); a process of
# nobody's twinned by nobody (no frame numbers); and twins of real programs
# this test starts and stops - python3 with modules imported, PostgreSQL
# with 256 MiB of shared_buffers after pgbench -i, a JVM with a 1 GiB heap,
# memcached with its memory locked and on huge pages - each replayed on the
# model and live and compared with its original (--check: maps, Rss,
# Anonymous, Swap, AnonHugePages, Locked the same on every VMA). A program
# that is not installed is skipped with the reason. TAP.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
many_vmas=$2
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pids=""
pgdata=""
pgctl=""

# Whatever happens: every program started here stopped, PostgreSQL too.
cleanup() {
	for p in $pids; do
		kill -9 "$p" 2>/dev/null
	done
	if [ -n "$pgdata" ] && [ -f "$pgdata/postmaster.pid" ]; then
		runuser -u postgres -- "$pgctl" -D "$pgdata" -m immediate stop >/dev/null 2>&1
	fi
	cd / && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$tmp" || exit 1
chmod 755 "$tmp"

skip() {
	n=$((n + 1))
	echo "ok $n # SKIP $1"
}

# state PID: the one-letter state in /proc/PID/stat ('' once it is gone).
state() {
	sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null
}

# twin_check NAME PID: --check on model and live passes, with every VMA's maps
# the same and no VMA missing or extra on either; the figures go to the TAP log.
twin_check() {
	vml twin "$2" --out "$1.ops" --check --target both
	rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c '^twin of .* on \(model\|live\): ' out)" -eq 2 ] &&
		! grep -q 'DIFFERS' out &&
		grep '^twin of ' out | awk '{ split($0, a, /: /); split(a[2], b, " ");
			vmas = b[1]; if (a[2] !~ ("maps the same on " vmas ", missing 0, extra 0$")) bad = 1 }
			END { exit bad }' &&
		[ "$(grep -c '^Rss .* exact$' out)" -eq 2 ] && [ -s "$1.ops" ]
	ok $? "$1: the twin agrees with the original on model and live (exit $rc)"
	awk '/^twin of .* on live/ { p = 1 } p' out | sed "s/^/# $1: /"
	grep '^vmalock twin: process' err | sed "s/^/# $1: /"
}

# ---- usage ----

expect 2 'missing PID' "no PID" -- twin
expect 2 "PID: bad value 'abc'" "a PID that is not a number" -- twin abc
expect 2 '--target: only with --check' "--target without --check" -- twin 1 --target live
expect 2 '--attempts: only with --check' "--attempts without --check" -- twin 1 --attempts 2
expect 2 "--attempts: bad value '0'" "--check --attempts 0" -- twin 1 --check --attempts 0
vml twin --help
rc=$?
[ $rc -eq 0 ] && grep -q '\[vdso\]' out && grep -q 'hugetlb' out && grep -q 'growsdown' out &&
	grep -q 'Pss and the Shared_\* fields' out
ok $? "--help says what is left out and what is compared (exit $rc)"

sleep 600 &
gone=$!
kill -9 $gone
wait $gone 2>/dev/null
expect 2 "no process $gone (ESRCH)" "a PID that is not there" -- twin $gone

if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	expect 2 "process 2 has no address space (a kernel thread)" "a kernel thread" -- twin 2
else
	skip "no kthreadd at PID 2 here: no kernel thread to twin"
fi

# ---- a reader without permission ----

sleep 600 &
root_pid=$!
pids="$pids $root_pid"
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	skip "not root, or no setpriv: cannot read a root process as nobody"
else
	printf '#!/bin/sh\nexec setpriv --reuid=nobody --regid=nogroup --clear-groups %s "$@"\n' \
		"$vmalock" >as-nobody
	chmod 755 as-nobody
	real=$vmalock
	vmalock=$tmp/as-nobody
	vml twin "$root_pid" --out nobody.ops
	rc=$?
	vmalock=$real
	[ $rc -eq 2 ] && [ "$(err_lines)" -eq 1 ] &&
		grep -q "/proc/$root_pid/smaps: Permission denied (EACCES)" err && [ ! -e nobody.ops ]
	ok $? "as nobody, a root process: one line with EACCES, exit 2, no script (exit $rc)"
fi

# ---- a process that exits while it is read ----

# exits_midway WHERE: twin stops itself at WHERE (VML_TWIN_TEST_STOP), the
# process it reads is killed and reaped, twin goes on.
exits_midway() {
	"$many_vmas" >victim.out &
	victim=$!
	pids="$pids $victim"
	i=0
	while ! grep -q '^ready' victim.out 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	(VML_TWIN_TEST_STOP=$1 vml twin "$victim" --out midway.ops) &
	sub=$!
	i=0
	tw=""
	while [ $i -lt 600 ]; do
		tw=$(pgrep -P $sub | head -n 1)
		[ -n "$tw" ] && [ "$(state "$tw")" = T ] && break
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$victim"
	wait "$victim" 2>/dev/null
	[ -n "$tw" ] && kill -CONT "$tw"
	wait $sub
	rc=$?
	[ $rc -eq 1 ] && [ "$(err_lines)" -eq 1 ] &&
		grep -q "process $victim exited while .*(ESRCH): no twin" err &&
		[ ! -e midway.ops ] && [ ! -e midway.ops.tmp ]
	ok $? "exits while its $1 is read: one line, exit 1, no script (exit $rc)"
}
exits_midway smaps
exits_midway pagemap

# ---- vm.max_map_count VMAs ----

"$many_vmas" >many.out &
many=$!
pids="$pids $many"
i=0
while ! grep -q '^ready' many.out 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
nvmas=$(sed -n 's/^ready //p' many.out)
limit=$(cat /proc/sys/vm/max_map_count)
special=$(grep -c ' \[\(vdso\|vvar\|vvar_vclock\|vsyscall\)\]$' "/proc/$many/maps")
vml twin "$many" --out many.ops
rc=$?
[ $rc -eq 0 ] && [ "${nvmas:-0}" -ge $((limit - 1)) ] &&
	[ "$(grep -c '^mmap ' many.ops)" -eq $((nvmas - special)) ] &&
	grep -q "over vm.max_map_count ($limit): a replay's last mmaps fail with ENOMEM" err &&
	grep -q "^vmalock twin: process $many (many-vmas): $nvmas VMAs ($special skipped)" err
ok $? "a process with $nvmas VMAs (the limit $limit): every VMA in the script, the limit said (exit $rc)"
kill -9 $many
wait $many 2>/dev/null

# ---- a process with pages in swap ----

# The only swap a test may have is a script's own (`swap`: the keeper makes
# a swap file for the run and removes it): so the original is a replay's
# live child, which pages out 256 KiB and then keeps busy, twinned while it
# runs, then interrupted.
if [ "$(id -u)" -ne 0 ]; then
	skip "swap: a script's swap directive needs root"
else
	{
		echo "swap 64M"
		echo "mmap 0x100040000000 1M rw- private,anon"
		echo "touch 0x100040000000 1M write"
		echo "madvise 0x100040000000 256K pageout"
		echo "mmap 0x100060000000 8M rw- private,anon"
		i=0
		while [ $i -lt 20000 ]; do
			echo "madvise 0x100060000000 8M populate_write"
			echo "madvise 0x100060000000 8M dontneed"
			i=$((i + 1))
		done
	} >swapper.ops
	mkdir swapper
	(cd swapper && vml replay ../swapper.ops --target live --quiet) &
	sub=$!
	child=""
	i=0
	while [ $i -lt 3000 ]; do
		vm=$(pgrep -P $sub | head -n 1)
		child=${vm:+$(pgrep -P "$vm" -x vmalock-child | head -n 1)}
		[ -n "$child" ] && grep -q '^Swap: *256 kB' "/proc/$child/smaps" 2>/dev/null && break
		child=""
		sleep 0.1
		i=$((i + 1))
	done
	# Stopped by cleanup too: killed, its keeper still removes the swap file.
	[ -n "${vm:-}" ] && pids="$pids $vm"
	if [ -n "$child" ]; then
		vml twin "$child" --out swapped.ops
		rc=$?
		[ $rc -eq 0 ] && grep -q '^swap ' swapped.ops && grep -q ' 0x40000 pageout$' swapped.ops
		ok $? "a process with 256 KiB in swap: its twin asks for swap and pages out 256 KiB (exit $rc)"
	else
		ok 1 "a process with 256 KiB in swap: the replay's child never showed it"
	fi
	# Done with it: interrupted, the replay still turns its swap off and removes it.
	[ -n "${vm:-}" ] && kill -TERM "$vm" 2>/dev/null
	wait $sub
	if [ -s swapped.ops ]; then
		vml replay swapped.ops --target both --compare maps,smaps
		rc=$?
		[ $rc -eq 0 ] && [ "$(grep -c ': same on model and live' out)" -eq 2 ]
		ok $? "the swapped twin: the same maps and smaps on model and live (exit $rc)"
		vml replay swapped.ops --target live --view smaps
		rc=$?
		swap=$(awk '$1 == "Swap:" { s += $2 } END { print s + 0 }' out)
		[ $rc -eq 0 ] && [ "$swap" -eq 256 ]
		ok $? "the swapped twin, live: Swap 256 kB as the original's (got $swap, exit $rc)"
	else
		skip "no swapped twin to replay"
		skip "no swapped twin to replay"
	fi
fi

# ---- twins of real programs ----

# python3 with a few modules imported and a little data of its own; an 8 MiB
# region advised MADV_HUGEPAGE and written (huge pages), 1 MiB read and never
# written (the zero page), 64 KiB mlock()ed (a locked range).
if ! command -v python3 >/dev/null 2>&1; then
	skip "python3: not installed"
else
	cat >py.py <<'EOF'
import json, decimal, sqlite3, ssl, hashlib, collections, re, mmap, ctypes, time
data = [dict(i=i, s=str(i) * 10) for i in range(20000)]
huge = mmap.mmap(-1, 8 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
huge.madvise(mmap.MADV_HUGEPAGE)
for i in range(0, 8 << 20, 4096):
    huge[i] = 1
zero = mmap.mmap(-1, 1 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
sum(zero[i] for i in range(0, 1 << 20, 8192))
locked = mmap.mmap(-1, 64 << 10, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
libc = ctypes.CDLL(None, use_errno=True)
if libc.mlock(ctypes.c_void_p(ctypes.addressof(ctypes.c_char.from_buffer(locked))), 64 << 10):
    raise OSError(ctypes.get_errno(), "mlock")
print("ready", flush=True)
time.sleep(600)
EOF
	python3 py.py >py.out 2>&1 &
	py=$!
	pids="$pids $py"
	i=0
	while ! grep -q '^ready' py.out 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	twin_check python3 "$py"
	# The original had what the twin must make: huge pages, a locked range, zero-page reads.
	[ "$(awk '$1 == "AnonHugePages" { print $3; exit }' out)" -ge 2048 ] &&
		[ "$(awk '$1 == "Locked" { print $3; exit }' out)" -ge 64 ] &&
		grep -q ' collapse$' python3.ops && grep -q '^mlock ' python3.ops &&
		grep -q '^touch .* read$' python3.ops
	ok $? "python3: its huge pages, locked range and read pages in the twin"
	# The same program as nobody, twinned by nobody: pagemap hides frame
	# numbers, so zero pages are told by smaps' Rss and huge pages by
	# AnonHugePages alone (docs/twin.md).
	# (root's python3 may live where nobody cannot reach it: /root/.pyenv)
	nobody_py=""
	for p in /usr/bin/python3 /usr/local/bin/python3; do
		if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
		   setpriv --reuid=nobody --regid=nogroup --clear-groups "$p" -c '' 2>/dev/null; then
			nobody_py=$p
			break
		fi
	done
	if [ -n "$nobody_py" ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$nobody_py" py.py >pyn.out 2>&1 &
		pyn=$!
		pids="$pids $pyn"
		i=0
		while ! grep -q '^ready' pyn.out 2>/dev/null && [ $i -lt 600 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		real=$vmalock
		vmalock=$tmp/as-nobody
		chmod 1777 "$tmp"	# for nobody's script
		twin_check python3-as-nobody "$pyn"
		chmod 755 "$tmp"
		vmalock=$real
		grep -q '^# pagemap hid page frame numbers' python3-as-nobody.ops
		ok $? "python3 as nobody: the script says frame numbers were hidden"
		kill -9 $pyn
	else
		skip "not root, no setpriv, or no python3 nobody may run: nothing of nobody's to twin"
	fi
	# The brief's own use: the twin replays like any script, model against live.
	vml replay python3.ops --target both --compare maps,smaps,numa_maps
	rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c ': same on model and live' out)" -eq 3 ]
	ok $? "python3: replay --compare maps,smaps,numa_maps of the twin (exit $rc)"
fi

# PostgreSQL: initdb into our directory as postgres, a private port on a
# unix socket here, shared_buffers=256MB, pgbench -i; the postmaster is twinned.
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$pgbin" ] || [ ! -x "$pgbin/pgbench" ]; then
	skip "PostgreSQL: postgresql and postgresql-contrib not installed"
elif [ "$(id -u)" -ne 0 ] || ! id postgres >/dev/null 2>&1; then
	skip "PostgreSQL: needs root and the postgres user"
else
	pgctl=$pgbin/pg_ctl
	mkdir pg && chown postgres pg
	port=$((50000 + $$ % 10000))
	if runuser -u postgres -- "$pgbin/initdb" -D "$tmp/pg/data" -A trust -U postgres \
			>pg/initdb.log 2>&1 &&
	   pgdata=$tmp/pg/data &&
	   runuser -u postgres -- "$pgctl" -D "$pgdata" -l "$tmp/pg/log" -w -t 120 start \
			-o "-k $tmp/pg -p $port -c listen_addresses='' -c shared_buffers=256MB" \
			>pg/start.log 2>&1 &&
	   runuser -u postgres -- "$pgbin/pgbench" -i -h "$tmp/pg" -p "$port" postgres \
			>pg/pgbench.log 2>&1; then
		twin_check postgresql "$(head -n 1 "$pgdata/postmaster.pid")"
	else
		ok 1 "PostgreSQL: could not be started (initdb, pg_ctl start or pgbench -i)"
		tail -n 5 pg/*.log | sed 's/^/# /'
	fi
	runuser -u postgres -- "$pgctl" -D "$pgdata" -m fast stop >/dev/null 2>&1
fi

# A JVM with a 1 GiB heap (the source launcher: the JRE alone suffices).
if ! command -v java >/dev/null 2>&1; then
	skip "JVM: default-jre-headless not installed"
else
	cat >Idle.java <<'EOF'
public class Idle {
    public static void main(String[] a) throws Exception {
        byte[][] keep = new byte[64][];
        for (int i = 0; i < keep.length; i++) keep[i] = new byte[1 << 20];
        System.out.println("ready");
        Thread.sleep(600000);
    }
}
EOF
	java -Xms1g -Xmx1g Idle.java >java.out 2>&1 &
	jvm=$!
	pids="$pids $jvm"
	i=0
	while ! grep -q '^ready' java.out 2>/dev/null && [ $i -lt 1200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	twin_check jvm "$jvm"
fi

# memcached with its memory locked (-k: mlockall) and on huge pages (-L).
if ! command -v memcached >/dev/null 2>&1; then
	skip "memcached: not installed"
elif [ "$(id -u)" -ne 0 ]; then
	skip "memcached: -k (mlockall of 64 MiB) needs root"
else
	memcached -u root -m 64 -k -L -s "$tmp/mc.sock" >mc.out 2>&1 &
	mc=$!
	pids="$pids $mc"
	i=0
	while [ ! -S "$tmp/mc.sock" ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	twin_check memcached "$mc"
fi

done_tap
