#!/bin/sh
# layout.sh VMALOCK LAYOUTS_DIR [TARGET [SIM_COSTS]]: `--layout FILE.ops` of proc-vs-map, run and
# monitor at tiny sizes (bench/layout.c): the layout is in the readers' view
# on every target (each row counts its VMAs there), the mapper's region lies
# in a free gap beside it, and a bad layout is refused with exit 2 and one
# line naming its line, before anything runs. TAP output.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
layouts=$(cd "$2" && pwd)
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

db=$layouts/database.ops
target=${3:-both}	# model while no live child can run here

# check_layout FILE WANT_TARGETS: every row found the layout's VMAs; the
# region is clear of every layout VMA (with the guard) and in the scripts' range
check_layout() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = set(sys.argv[2].split(","))
lay = d["meta"]["layout"]
assert lay and lay["vmas"] > 0 and lay["pages"] > 0, lay
assert lay["lo"] < lay["hi"], lay
rows = d["rows"]
assert {r["target"] for r in rows} == want, rows
for r in rows:
    assert r["layout_vmas"] == lay["vmas"], (r["target"], r["lock"], r["layout_vmas"], lay)
    assert r["vmas"] >= lay["vmas"], r
guard = 2 << 20
a, n = lay["region"], lay["region_len"]
assert a % guard == 0, hex(a)
assert 0x100000000000 <= a - guard and a + n + guard <= 0x200000000000, hex(a)
PY
}

# 1-3: proc-vs-map on smaps with the synthetic database layout
vml bench proc-vs-map --layout "$db" --target "$target" --view smaps --readers 1 \
	--duration 0.2 --samples 1 --json pvm.json --quiet
rc=$?
[ $rc -eq 0 ] && grep -q "^# layout .*database.ops: [0-9]* VMAs" out
ok $? "proc-vs-map --layout runs and says what it laid out (exit $rc)"
check_layout pvm.json "$( [ "$target" = both ] && echo model,live || echo model)" >err 2>&1
ok $? "every row's address space holds all the layout's VMAs; the region is beside them"
python3 - pvm.json "$db" >err 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lay = d["meta"]["layout"]
assert lay["path"] == sys.argv[2], lay
# the region above the layout: nothing of it overlaps [lo, hi)
assert lay["region"] >= lay["hi"] + (2 << 20), lay
PY
ok $? "the JSON records the layout's path; the region lies above it, not over it"

# 4: a layout reaching the top of the scripts' range: the region goes in the
# lowest gap, below the layout's first mapping
cat >high.ops <<'EOF'
mmap 0x100040000000 1M rw- private,anon
touch 0x100040000000 64K write
mmap 0x1ffff0000000 0xff00000 r-- private,anon
EOF
vml bench proc-vs-map --layout high.ops --target model --readers 1 --duration 0.1 \
	--samples 1 --mb 4 --json high.json --quiet
rc=$?
[ $rc -eq 0 ] && python3 - high.json >err 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lay = d["meta"]["layout"]
assert lay["vmas"] == 2, lay
assert lay["region"] + lay["region_len"] + (2 << 20) <= 0x100040000000, hex(lay["region"])
assert all(r["layout_vmas"] == 2 for r in d["rows"]), d["rows"]
PY
ok $? "no room above the layout: the region goes in the lowest gap (exit $rc)"

# 5: the simulated machine takes a layout too (a saved table: no live kernel needed)
sim_costs=${4:-}
if [ -n "$sim_costs" ] && [ -f "$sim_costs" ]; then
	vml bench proc-vs-map --layout high.ops --cpus 2 --sim-only --sim-costs "$sim_costs" \
		--readers 1 --duration 0.05 --samples 1 --mb 4 --json sim.json --quiet
	rc=$?
	[ $rc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rows"] and all(r["sim"] and r["layout_vmas"] == 2 for r in d["rows"]), d["rows"]
' sim.json >err 2>&1
	ok $? "simulated rows lay the layout out too (exit $rc)"
fi

# a layout that truncates its file: every live sample starts from files of its own
if [ "$target" = both ]; then
	cat >trunc.ops <<'EOF'
file data 64K
mmap 0x100000000000 64K rw- shared file=data
touch 0x100000000000 64K write
truncate data 8K
EOF
	vml bench proc-vs-map --layout trunc.ops --target live --readers 1 --duration 0.05 \
		--samples 2 --mb 4 --quiet
	ok $? "a layout that truncates its file replays in every live sample"
fi

# 6-12: bad layouts: exit 2, one line, before anything is measured
printf 'mmap 0x100000000000 1M rw- private,anon\nmprotect 0x100000001001 4096 r--\n' >bad-op.ops
expect 2 "bad-op.ops:2: mprotect: on the model: ended with EINVAL, not 0" \
	"an op that fails names its line" -- bench proc-vs-map --layout bad-op.ops --target model
printf 'mmap 0x100000000000 1M rw- private,anon\nfrob 1\n' >bad-word.ops
expect 2 "bad-word.ops:2: frob: unknown op" "an unknown op names its line" -- \
	bench proc-vs-map --layout bad-word.ops --target model
printf 'mmap 0x100000000000 1M rw- private,anon\nfork\n' >fork.ops
expect 2 "fork.ops:2: a layout is one process" "fork is refused" -- \
	bench proc-vs-map --layout fork.ops --target model
printf 'swap 16M\nmmap 0x100000000000 1M rw- private,anon\n' >swap.ops
expect 2 "no swap, knobs or require directive" "a directive that changes the machine" -- \
	bench proc-vs-map --layout swap.ops --target model
printf 'mmap 0x100000000000 0x100000000000 --- private,anon,noreserve\n' >full.ops
expect 2 "no free gap of 128 MiB" "no room for the mapper's region" -- \
	bench proc-vs-map --layout full.ops --target model
printf 'mmap 0x7f0000000000 1M rw- private,anon\n' >outside.ops
expect 2 "lies outside 0x100000000000-0x200000000000" \
	"a layout the live child would lay over its own mappings" -- \
	bench proc-vs-map --layout outside.ops --target live
expect 2 "missing.ops" "a layout that is not there" -- \
	bench proc-vs-map --layout missing.ops --target model
expect 2 "bad-op.ops:2: mprotect" "vmalock run checks the layout first" -- \
	run --layout bad-op.ops --json run.json --plot run.png
[ ! -e run.json ] && [ ! -e run.png ]
ok $? "...and writes nothing"

# 13: monitor's mapper works beside the layout too (a tool of our own, always there)
if [ "$target" = both ]; then
	vml bench monitor --layout high.ops --tools none \
		--tool 'cat /proc/{pid}/smaps_rollup' --duration 0.2 --samples 1 --mb 4 \
		--interval 0.1 --json mon.json --quiet
	rc=$?
	[ $rc -eq 0 ] && grep -q "^# layout .*high.ops: 2 VMAs" out && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["layout"]["vmas"] == 2, d["meta"]["layout"]
samples = [s for r in d["rows"] for s in r["per_sample"]]
assert {r["target"] for r in d["rows"]} == {"model", "live"}, d["rows"]
assert samples and all(s["layout_vmas"] == 2 for s in samples), samples
' mon.json >err 2>&1
	ok $? "bench monitor --layout: every sample, model and live, holds the layout (exit $rc)"
fi

# watch --predict: PID's twin taken before the watch, or --layout, checked
# before the watch starts
expect 2 "PID 999999999's twin" "watch --predict of no process: its twin says so" -- \
	watch 999999999 --predict
expect 2 "layout: needs --predict" "watch --layout without --predict" -- \
	watch 1 --layout high.ops
expect 2 "bad-op.ops:2: mprotect" "watch --predict checks the twin first" -- \
	watch 1 --predict --layout bad-op.ops
if [ "$(id -u)" -eq 0 ] && [ "$target" = both ]; then
	sleep 20 &
	sleeper=$!
	vml watch "$sleeper" --duration 0.2 --predict --layout high.ops --predict-duration 0.1 \
		--json watch.json
	rc=$?
	kill "$sleeper" 2>/dev/null
	# exit 2 naming tracing: no tracefs or mmap_lock tracepoints here (not ours to test)
	if [ $rc -ne 2 ] || ! grep -qi "trac" err; then
		[ $rc -eq 0 ] && grep -q "^prediction (--predict)" out && \
			grep -q "^# layout .*high.ops: 2 VMAs" out && \
			grep -qE "^ +measured: PID's mmap_lock waits" out && \
			grep -qE "^ +model, 6.18 \(mmap\): mapper's calls +[0-9]+ " out && \
			grep -qE "^ +model, per-VMA \(vma\): mapper's calls +[0-9]+ " out && \
			python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["prediction"]
assert p["vmas"] == 2 and p["view"] == "smaps", p
assert [r["lock"] for r in p["rows"]] == ["mmap", "vma"], p
assert all(r["ops"] > 0 and 0 < r["avg_us"] <= r["max_us"] for r in p["rows"]), p
' watch.json >err 2>&1
		ok $? "watch --predict prints the model's mapper under both policies, and --json has it (exit $rc)"
	fi
	# without --layout: the twin of the process itself, and no file of it left
	sleep 20 &
	sleeper=$!
	ls -d /tmp/vmalock-twin.* >twins-before 2>/dev/null
	vml watch "$sleeper" --duration 0.2 --predict --predict-duration 0.1 --json watch2.json
	rc=$?
	kill "$sleeper" 2>/dev/null
	ls -d /tmp/vmalock-twin.* >twins-after 2>/dev/null
	if [ $rc -ne 2 ] || ! grep -qi "trac" err; then
		[ $rc -eq 0 ] && grep -q "^# layout PID $sleeper's twin: " out &&
			cmp -s twins-before twins-after && python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["prediction"]
assert p["layout"].endswith("twin") and p["vmas"] > 3, p
assert all(r["ops"] > 0 for r in p["rows"]), p
' watch2.json >err 2>&1
		ok $? "watch --predict alone twins PID first and leaves no file of it (exit $rc)"
	fi
fi

done_tap
