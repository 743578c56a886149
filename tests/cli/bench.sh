#!/bin/sh
# bench.sh VMALOCK TARGET TEST_JSON: every benchmark scenario and `vmalock run` once at a
# tiny size, checking the structure of the output and the JSON's schema (not
# the numbers: a benchmark is not a test, and a slow machine must not fail);
# then bad options (exit 2, one line naming the option). TARGET is both, or
# live while the model does not link. TAP output.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
target=${2:-both}
test_json=${3:-}
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# Every JSON document written has the benchmarks' one schema (meta,
# calibration, rows: docs/bench-json.md) and is read, written and read again
# unchanged through the project's JSON layer (tests/tools/test-json.c).
roundtrip() {
	[ -n "$test_json" ] || return 0
	"$test_json" --bench "$@"
}

# check_json FILE SCENARIO SAMPLES TARGET: the JSON's rows, by scenario
check_json() {
	python3 - "$@" <<'PY'
import json, sys
path, scenario, samples, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
num = (int, float)
meta = d["meta"]
assert meta["scenario"] == scenario, meta["scenario"]
assert isinstance(meta["samples"], int) and meta["samples"] == samples
rows = d["rows"]
assert isinstance(rows, list) and rows, "no rows"
targets = {"model", "live"} if target == "both" else {target}
assert set(meta["targets"]) == targets, meta["targets"]
if scenario == "proc-vs-map":
    assert meta["view"] in ("maps", "smaps", "smaps_rollup", "numa_maps", "query")
    assert isinstance(meta["duration_s"], num)
    for r in rows:
        assert r["target"] in ("model", "live"), r
        assert r["lock"] == ("kernel" if r["target"] == "live" else r["lock"]), r
        assert r["lock"] in ("mmap", "vma", "vma-strict", "vma-recheck", "kernel"), r
        assert isinstance(r["readers"], int)
        for k in ("p50_us", "p99_us", "max_us", "max_us_worst", "ops", "vmas"):
            assert isinstance(r[k], num) and r[k] >= 0, (k, r)
        assert r["p50_us"] <= r["p99_us"] <= r["max_us"] <= r["max_us_worst"], r
        assert isinstance(r["avg_us"], num) and 0 < r["avg_us"] <= r["max_us_worst"], r
        assert r["ops"] > 0 and r["vmas"] > 0, r
        ps = r["per_sample"]
        assert len(ps) == samples, ps
        for s in ps:
            for k in ("p50_us", "p99_us", "avg_us", "max_us", "ops", "vmas"):
                assert isinstance(s[k], num), (k, s)
            assert 0 < s["avg_us"] <= s["max_us"], s  # a mean lies within the calls
    assert {r["target"] for r in rows} == targets, rows
elif scenario == "read-cost":
    for r in rows:
        assert r["target"] in ("model", "live") and r["lock"] in ("mmap", "vma", "kernel")
        assert isinstance(r["size"], int)
        if "skipped" not in r:
            assert isinstance(r["ns_per_vma"], num) and r["ns_per_vma"] > 0, r
            assert isinstance(r["vmas"], int) and r["vmas"] > 0, r
            assert len(r["per_sample"]) == samples, r
            if r["target"] == "model":  # over the live kernel's; vma over mmap
                assert "over_live" in r and (r["lock"] == "mmap" or "over_mmap" in r), r
    assert {r["target"] for r in rows} == targets, rows
elif scenario == "ops":
    ops = {r["op"] for r in rows}
    assert {"mmap_munmap", "mprotect_split_merge", "write_fault"} <= ops, ops
    for r in rows:
        for side in ("model", "live"):
            if side in targets:
                assert isinstance(r[side + "_ns"], num) and r[side + "_ns"] > 0, r
        if target == "both":
            assert isinstance(r["model_over_live"], num), r
PY
}

lock_args=""
[ "$target" = live ] || lock_args="--lock both"
tiny="--duration 0.2 --samples 2 --mb 4"

# proc-vs-map: rows target x policy x readers, a JSON and an SVG
vml bench proc-vs-map --target "$target" $lock_args $tiny --readers 0,1 \
	--json pvm.json --plot pvm.svg
rc=$?
rows=$(grep -cE '^(model|live) +(mmap|vma|kernel) +[0-9]+ ' out)
want=2; [ "$target" = both ] && want=6
[ $rc -eq 0 ] && [ "$rows" -eq $want ] && grep -q '^target  *lock  *readers  *max_med' out
ok $? "proc-vs-map prints a table of $want rows"
check_json pvm.json proc-vs-map 2 "$target" >err 2>&1 && roundtrip pvm.json 2>>err
ok $? "proc-vs-map JSON has the schema"
grep -q '<svg' pvm.svg 2>/dev/null
ok $? "proc-vs-map --plot writes an SVG"
# smaps on both targets: each round's model samples are charged the page walk
# their round's live sample timed on its own mapper (or, unmeasured, the
# calibration's), less the model's own cost
if [ "$target" = both ]; then
	vml bench proc-vs-map --target both --lock mmap --view smaps $tiny --readers 1 \
		--json paired.json --quiet
	rc=$?
	[ $rc -eq 0 ] && grep -q 'page charge paired by round' out &&
		grep -qE "(woken futex_wait's return to user space from its switch-in \([0-9]+ ns|futex_wait round trip \([0-9]+ ns\) for the model writer's way back)" out &&
		python3 - paired.json >err 2>&1 <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
cal = d["calibration"]
assert cal["page_ns_paired"] is True and cal["measured"] is True, cal
# per read() call: the EOF read()'s difference plus the writer's way back
# (a woken futex_wait's return where perf allows, else a futex round trip)
way = cal.get("ns_woken_futex_return", cal["ns_per_futex_round_trip"])
assert 0 < way < 100000, cal
want = max(0.0, cal["live_ns_per_eof_read"] - cal["model_ns_per_eof_read"] + way)
assert abs(cal["call_ns"] - want) < 1, (cal["call_ns"], want, cal)
live = {r["readers"]: r["per_sample"] for r in d["rows"] if r["target"] == "live"}
for r in d["rows"]:
    if r["target"] != "model":
        continue
    for i, s in enumerate(r["per_sample"]):
        ls = live[r["readers"]][i]
        if "live_ns_per_page" in ls:
            want = math.floor(max(0.0, ls["live_ns_per_page"] - cal["model_ns_per_page"]))
        else:
            want = math.floor(cal["page_ns"])
        assert s["charged_ns_per_page"] == want, (i, s, ls, cal)
PY
	ok $? "proc-vs-map smaps: model samples charged their round's live page walk, and per call the writer's way back (exit $rc)"
	# simulated samples: their round's live walk whole, as its readers' own
	# big read()s timed it (thread CPU time a page), else as the probe did
	vml bench proc-vs-map --target live --cpus 2 --lock mmap --view smaps --duration 0.2 \
		--samples 2 --mb 16 --readers 1 --json simpaired.json --quiet
	rc=$?
	[ $rc -eq 0 ] && grep -q 'page walked, paired by round' out &&
		python3 - simpaired.json >err 2>&1 <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
live = [r for r in d["rows"] if r["target"] == "live"][0]["per_sample"]
sim = [r for r in d["rows"] if r.get("sim")][0]["per_sample"]
assert any("live_run_ns_per_page" in s for s in live), live
for s, ls in zip(sim, live):
    want = ls.get("live_run_ns_per_page", ls["live_ns_per_page"])
    assert 1 < want < 100000 and s["charged_ns_per_page"] == math.floor(want), (s, ls)
PY
	ok $? "proc-vs-map --cpus 2: simulated samples charged their round's live walk as its readers timed it (exit $rc)"
fi
vml bench proc-vs-map --target "$target" $tiny --samples 1 --readers 1 --busy 1 \
	--busyduration 1 --view query
rc=$?
[ $rc -eq 0 ] && grep -q 'view query' out && grep -q 'sample 1/1' err
ok $? "proc-vs-map with a hog, the query view, and a progress line per sample"

# proc-vs-map with the reader-side fix beside the current reader: rows for
# both and their ratio (model only)
if [ "$target" = both ]; then
	vml bench proc-vs-map --target model --lock vma,vma-strict,vma-recheck \
		--kernel-transients $tiny --readers 1 --record-ns 0 --json strict.json --quiet
	rc=$?
	[ $rc -eq 0 ] && grep -qE '^model +vma +1 ' out && grep -qE '^model +vma-strict +1 ' out &&
		grep -qE '^model +vma-recheck +1 ' out &&
		grep -q '^# the reader-side fix.s cost to the mapper, model vma-strict / vma' out &&
		grep -q '^# the reader-side fix.s cost to the mapper, model vma-recheck / vma' out &&
		[ "$(grep -c '^#   readers 1: p50 [0-9.]*, p99' out)" -eq 2 ] &&
		grep -q 'kernel transients on' out &&
		python3 -c 'import json,sys; d=json.load(open("strict.json")); assert d["meta"]["kernel_transients"] is True; assert [r["lock"] for r in d["rows"]] == ["vma", "vma-strict", "vma-recheck"]; assert all(r["mmap_lock_fallbacks"] >= 0 for r in d["rows"])' 2>err
	ok $? "proc-vs-map --lock vma,vma-strict,vma-recheck: the rows and the fixes' cost ratios (exit $rc)"
fi

# read-cost: small layouts, a JSON and a PNG
vml bench read-cost --target "$target" --sizes 100,1k --samples 2 --json rc.json \
	--plot rc.png --quiet
rc=$?
[ $rc -eq 0 ] && [ ! -s err ] && grep -q '^ *size  *vmas  *mmap' out && \
	[ "$(grep -cE '^ +(100|1000) ' out)" -eq 2 ]
ok $? "read-cost prints one row per size"
check_json rc.json read-cost 2 "$target" >err 2>&1 && roundtrip rc.json 2>>err
ok $? "read-cost JSON has the schema"
head -c 8 rc.png 2>/dev/null | grep -q PNG
ok $? "read-cost --plot writes a PNG"

# ops
vml bench ops --target "$target" --samples 2 --iterations 50 --vmas 50 --json ops.json \
	--quiet
rc=$?
[ $rc -eq 0 ] && grep -q '^mmap+munmap (1 page) ' out && grep -q '^write fault (1 page) ' out && \
	grep -q '^maps read per VMA' out && grep -q 'model/live' out
ok $? "ops prints the table"
check_json ops.json ops 2 "$target" >err 2>&1 && roundtrip ops.json 2>>err
ok $? "ops JSON has the schema"

# khugepaged (model rows; the live row changes system settings: suite system): the
# policies, a JSON
if [ "$target" = both ]; then
	vml bench khugepaged --target model --skip-vmas 2000 --ranges 2 --samples 1 \
		--duration 2 --uncollapsible 1 --json kh.json
	[ $? -eq 0 ] && grep -qE '^model +mainline +nosteal ' out && \
		grep -qE '^model +fixed +nosteal ' out && grep -q 'model fixed (nosteal) / mainline' out
	ok $? "bench khugepaged: a row per policy and the ratios"
	python3 - kh.json >err 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
meta = d["meta"]
assert meta["scenario"] == "khugepaged" and meta["samples"] == 1 and meta["uncollapsible"] == 1
assert d["calibration"] is None
assert [r["policy"] for r in d["rows"]] == ["mainline", "fixed"]
for r in d["rows"]:
    assert r["target"] == "model" and r["steal"] == "nosteal"
    assert r["collapse_ms"] is None or r["collapse_ms"] >= 0
    for k in ("max_hold_ms", "p50_us", "p99_us", "max_us"):
        assert r[k] >= 0, (k, r)
    assert len(r["per_sample"]) == 1
PY
	[ $? -eq 0 ] && roundtrip kh.json 2>>err
	ok $? "bench khugepaged: JSON schema"
	vml bench khugepaged --target model --skip-vmas 3000 --ranges 1 --samples 1 \
		--duration 2 --policy all --steal mainline,not-behind-writer --quiet
	[ $? -eq 0 ] && [ "$(grep -cE '^model +(mainline|resume|skip|drop|fixed) +(mainline|not-behind-writer) ' out)" -eq 10 ]
	ok $? "bench khugepaged --policy all --steal LIST: a row per fix and steal policy"
	vml bench proc-vs-map --target model --lock mmap --view smaps_rollup $tiny \
		--samples 1 --readers 1 --steal all --trace --quiet
	# four rows in the table, four in the traced one
	[ $? -eq 0 ] && grep -q '^# lock dynamics from traces' out && \
		[ "$(grep -cE '^model +mmap +(mainline|nosteal|not-behind-writer|never) +1 +[0-9]' out)" -eq 8 ]
	ok $? "proc-vs-map --steal all --trace: a row per steal policy and the traced table"
fi

# monitor: the no-tool row and a few tools (ps and pmap from procps, skipped with a
# reason when missing; a --tool of our own that is always there), a JSON and an SVG
vml bench monitor --target "$target" --tools ps,pmap \
	--tool 'cat /proc/self/maps /proc/{pid}/smaps_rollup' --tool 'head -c 64 /proc/loadavg' \
	--duration 0.3 --samples 1 --mb 4 --interval 0.1 --json mon.json --plot mon.svg --quiet
rc=$?
[ $rc -eq 0 ] && grep -q '^tool  *polls  *poll_ms  *p50' out && grep -q '^(no tool) ' out && \
	grep -q '^cat ' out && grep -q "^# the model's prediction" out && \
	grep -q '^tool  *file  *opens  *reads' out
ok $? "bench monitor prints the live rows, the prediction and the /proc reads"
python3 - mon.json "$target" >err 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
target = sys.argv[2]
num = (int, float)
meta, cal = d["meta"], d["calibration"]
assert meta["scenario"] == "monitor" and meta["samples"] == 1, meta
if target == "both":
    # the model readers' charges, per view read: record, page walked, read() call
    assert set(cal["record_ns"]) == set(cal["page_ns"]) == set(cal["call_ns"]), cal
    for k in ("record_ns", "page_ns", "call_ns"):
        assert all(isinstance(x, num) and x >= 0 for x in cal[k].values()), (k, cal[k])
    # the cat tool reads smaps_rollup: charged per VMA and page too
    assert "smaps_rollup" in cal["record_ns"], cal["record_ns"]
else:
    assert cal is None, cal
assert isinstance(meta["interval_s"], num) and isinstance(meta["maps_per_vma_lock"], bool)
names = [t["name"] for t in meta["tools"]]
assert names == ["pmap", "ps", "cat", "head"], names  # built-ins in their order, then --tool
run = set()
for t in meta["tools"]:
    assert t["kind"] in ("command", "terminal", "exporter"), t
    if "skipped" in t:
        assert t["builtin"] and t["skipped"], t
        continue
    run.add(t["name"])
    if t["observed"] is None:
        assert t["not_observed"], t
        continue
    o = t["observed"]
    assert o["polls"] > 0
    for f in o["mapper_files"] + o["other_files"]:
        for k in ("opens", "reads", "bytes", "read_size", "failed_opens"):
            assert isinstance(f[k], num) and f[k] >= 0, (k, f)
        assert isinstance(f["lock"], str)
    for s in t["replay"]:
        assert s["view"] in ("maps", "smaps", "smaps_rollup", "numa_maps", "mmap_lock_hold"), s
        assert s["opens"] > 0 and s["read_size"] > 0, s
    if t["name"] == "cat":  # its own /proc/self/maps is not the mapper's, nor another's
        files = {f["file"]: f for f in o["mapper_files"]}
        assert list(files) == ["smaps_rollup"] and files["smaps_rollup"]["reads"] >= 2, files
        assert o["other_files"] == [] and o["other_processes"] == 0, o
        assert [s["view"] for s in t["replay"]] == ["smaps_rollup"], t["replay"]
    if t["name"] == "head":  # no {pid}: accepted, reads no process's files
        assert o["mapper_files"] == [] and o["proc_reads"] >= 1 and t["replay"] == [], o
assert {"cat", "head"} <= run
rows = d["rows"]
live = [r for r in rows if r["target"] == "live"]
assert {r["tool"] for r in live} == run | {None}, live
for r in rows:
    assert r["target"] in ("live", "model"), r
    assert r["lock"] in (("kernel",) if r["target"] == "live" else ("mmap", "vma", "today", None)), r
    for k in ("p50_us", "p99_us", "avg_us", "max_us", "max_us_worst", "ops", "vmas"):
        assert isinstance(r[k], num) and r[k] >= 0, (k, r)
    assert r["p50_us"] <= r["p99_us"] <= r["max_us"] <= r["max_us_worst"], r
    assert r["ops"] > 0 and len(r["per_sample"]) == 1, r
    if r["tool"] is not None:
        assert r["polls"] >= 1, r
    assert isinstance(r["timeouts"], int) and isinstance(r["errors"], int)
if target == "both":
    model = {(r["tool"], r["lock"]) for r in rows if r["target"] == "model"}
    assert (None, None) in model and ("cat", "mmap") in model and ("cat", "vma") in model, model
    # each tool's live row: what the seeds' per-VMA locks would make of it
    preds = {r["tool"]: r["prediction"] for r in live if "prediction" in r}
    assert preds["cat"]["today_lock"] == "mmap", preds
    for k in ("p50", "p99", "avg", "max"):
        assert isinstance(preds["cat"]["vma_over_today"][k], num), preds
        assert isinstance(preds["cat"]["predicted_live_us"][k], num), preds
    assert preds["head"]["today_lock"] is None and preds["head"]["vma_over_today"]["max"] == 1
PY
[ $? -eq 0 ] && roundtrip mon.json 2>>err
ok $? "bench monitor JSON has the schema (tools, observed reads, rows, predictions)"
grep -q '<svg' mon.svg 2>/dev/null
ok $? "bench monitor --plot writes an SVG"

# exec-churn: both orders on the model (and live exec loops), a JSON and an SVG
vml bench exec-churn --target "$target" --threads 1,2 --duration 0.2 --samples 1 \
	--json ec.json --plot ec.svg --quiet
rc=$?
rows=$(grep -cE '^(model +(pre|post)|live +kernel) +[12] ' out)
want=2; [ "$target" = both ] && want=6
[ $rc -eq 0 ] && [ "$rows" -eq $want ] && grep -q '<svg' ec.svg && \
	{ [ "$target" != both ] || [ "$(grep -c '^verdict' out)" -eq 2 ]; }
ok $? "exec-churn prints $want rows (and, with both targets, two verdict lines)"
python3 - ec.json "$target" >err 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["scenario"] == "exec-churn" and d["meta"]["samples"] == 1
num = (int, float)
seen = set()
for r in d["rows"]:
    seen.add((r["target"], r["order"]))
    assert r["threads"] in (1, 2) and isinstance(r["execs_per_s"], num) and r["execs_per_s"] > 0
    assert len(r["per_sample"]) == 1
    if r["target"] == "model":
        for k in ("hold_p50_ns", "hold_p99_ns", "sections_per_exec", "ceiling_execs_per_s",
                  "hot_sections_per_exec", "hot_hold_ns"):
            assert isinstance(r[k], num) and r[k] > 0, (k, r)
        assert r["hold_p50_ns"] <= r["hold_p99_ns"], r
want = {"both": {("model", "pre"), ("model", "post"), ("live", "kernel")},
        "live": {("live", "kernel")}}[sys.argv[2]]
assert seen == want, seen
PY
[ $? -eq 0 ] && roundtrip ec.json 2>>err
ok $? "exec-churn JSON has the schema"
if [ "$target" = both ]; then
	vml bench exec-churn --target model --i-mmap-order pre --threads 1 --duration 0.1 \
		--samples 1 --quiet
	[ $? -eq 0 ] && grep -qE '^model +pre +1 ' out && ! grep -qE '^model +post' out
	ok $? "exec-churn --i-mmap-order pre runs that order alone"

	# shmem-smaps on the model (the live side needs swap: the system suite runs it)
	vml bench shmem-smaps --target model --size 8M --stride 1M --reads 2 \
		--samples 2 --json ss.json --plot ss.png --quiet
	rc=$?
	[ $rc -eq 0 ] && [ "$(grep -cE '^model +(fast|per-page) +(private|shared|noswap|anon) ' out)" \
		-eq 8 ] && [ "$(grep -c '^verdict' out)" -eq 2 ] && head -c 8 ss.png | grep -q PNG
	ok $? "shmem-smaps prints 8 model rows, 2 verdicts and a PNG"
	python3 - ss.json >err 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
meta = d["meta"]
assert meta["scenario"] == "shmem-smaps" and meta["samples"] == 2 and meta["reads"] == 2
rows = {(r["smaps"], r["case"]): r for r in d["rows"]}
assert len(rows) == 8, rows.keys()
for r in rows.values():
    assert r["target"] == "model" and r["seconds"] > 0 and len(r["per_sample_seconds"]) == 2
    assert r["swap_kb"] == (0 if r["case"] in ("noswap", "anon") else 16), r
# which path each case took (vml_mm_stats): the seed's table
paths = {k: r["path"] for k, r in rows.items()}
assert paths[("fast", "private")] == "walk+per-page", paths
assert paths[("fast", "shared")] == "walk" and paths[("fast", "noswap")] == "none", paths
assert paths[("fast", "anon")] == "-" and paths[("per-page", "shared")] == "per-page", paths
assert rows[("fast", "shared")]["lookups_per_read"] == 0, rows
assert rows[("per-page", "noswap")]["lookups_per_read"] == 8 * 256 - 8, rows
PY
	[ $? -eq 0 ] && roundtrip ss.json 2>>err
	ok $? "shmem-smaps JSON has the schema, the Swap and each case's path"
fi

# vma-wait (any --mb, not only a power of two): a row per target and case;
# on the model, the munmap inside the zapped VMA waits for most of the rest
# of the zap: it cannot finish before the zap unmapped all 12,288 pages,
# freed the first full gather's 9,698 and dropped the VMA's read lock,
# whatever the machine's speed. A sample whose zapper lost its CPU to another
# task (a loaded machine) is not counted; a run where every sample was is
# run again, up to three times.
for _ in 1 2 3; do
	vml bench vma-wait --target "$target" --mb 48 --samples 3 --json vw.json --quiet
	rc=$?
	[ $rc -eq 0 ] && [ "$target" = both ] || break
	python3 -c 'import json,sys; d=json.load(open("vw.json"))
sys.exit(any(r["target"] == "model" and r["munmap"] == "same" and r["waited_over_left"] is None
             for r in d["rows"]))' && break
	echo "# vma-wait: every model sample was preempted; again"
done
want=4
[ "$target" = both ] || want=2
[ $rc -eq 0 ] && [ "$(grep -cE '^(model|kernel) +(inside the zapped VMA|in another VMA) ' out)" \
	-eq $want ]
ok $? "vma-wait prints $want rows"
python3 - vw.json "$target" >err 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
meta = d["meta"]
assert meta["scenario"] == "vma-wait" and meta["mb"] == 48 and meta["samples"] == 3
rows = {(r["target"], r["munmap"]): r for r in d["rows"]}
targets = ["model", "live"] if sys.argv[2] == "both" else ["live"]
assert sorted(rows) == sorted((t, c) for t in targets for c in ("same", "other")), rows.keys()
for r in rows.values():
    assert len(r["per_sample"]) == 3 and r["lead_ns"] > 0, r
    # the medians are over samples whose zapper kept its CPU: none (null) if all lost it
    assert r["zap_ns"] > 0 if r["preempted"] < 3 else r["zap_ns"] is None, r
    assert all(s["err"] == 0 and s["munmap_ns"] > 0 for s in r["per_sample"]), r
    assert r["preempted"] == sum(s["preempted"] for s in r["per_sample"]), r
if "model" in targets:
    assert rows[("model", "same")]["waited_over_left"] >= 0.3, rows[("model", "same")]
PY
[ $? -eq 0 ] && roundtrip vw.json 2>>err
ok $? "vma-wait JSON has the schema; the model's munmap inside the VMA waited for the zap"
expect 2 "^vmalock bench: --mb: vma-wait populates" "vma-wait --mb beyond 4096 MiB" -- \
	bench vma-wait --mb 8192

# faults: the live rows alone without --cpus (1 thread up to this machine's
# CPUs, each a VMA of its own), as the kernel rows of the JSON.
vml bench faults --target live --samples 1 --duration 0.05 --pages 16 --json fl.json --quiet
rc=$?
python3 - fl.json >err 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
meta = d["meta"]
assert meta["scenario"] == "faults" and meta["pages"] == 16 and meta["shared_vma"] is False
assert d["rows"] and [r["cpus"] for r in d["rows"]] == list(range(1, len(d["rows"]) + 1))
for r in d["rows"]:
    assert r["target"] == "live" and r["sim"] is False and r["lock"] == "kernel", r
    assert r["faults_per_s"] > 0 and len(r["per_sample"]) == 1, r
PY
py=$?
[ $rc -eq 0 ] && [ $py -eq 0 ] && roundtrip fl.json 2>>err
ok $? "faults: live rows, a CPU count each, in the JSON's schema"

# run: the table, the files and a three-line verdict; with both targets and
# two rounds, the fidelity line gives each avg and p99 ratio its rounds' range
vml run --target "$target" $tiny --quiet
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^verdict' out)" -eq 3 ] && [ -s vmalock-run.json ] && \
	head -c 8 vmalock-run.png | grep -q PNG &&
	{ [ "$target" != both ] ||
	  grep '^verdict (the model.s mmap policy' out |
	  grep -Eq '1 reader: avg [0-9.]+x\*? \[[0-9.]+x-[0-9.]+x\], p99 [0-9.]+x\*? \[[0-9.]+x-[0-9.]+x\]'; }
ok $? "run prints a verdict and writes vmalock-run.json and vmalock-run.png"
check_json vmalock-run.json proc-vs-map 2 "$target" >err 2>&1 && python3 - <<'PY' >err 2>&1
import json
d = json.load(open("vmalock-run.json"))
assert sorted({r["readers"] for r in d["rows"]}) == [0, 1, 4], d["rows"]
PY
[ $? -eq 0 ] && roundtrip vmalock-run.json 2>>err
ok $? "run's JSON has the schema and rows for 0, 1 and 4 readers"

# gnuplot's own errors (many lines, the script quoted) become one line of ours.
mkdir -p fakebin
printf '#!/bin/sh\necho "set output \\"x\\"" >&2\necho "         ^" >&2\necho "line 3: cannot open output file" >&2\nexit 1\n' >fakebin/gnuplot
chmod +x fakebin/gnuplot
PATH="$tmp/fakebin:$PATH" vml bench read-cost --target model --sizes 100 --samples 1 \
	--plot plotted.svg --quiet
rc=$?
[ $rc -eq 1 ] && [ "$(err_lines)" -eq 1 ] && grep -q 'plot: gnuplot failed: line 3: cannot open output file' err
ok $? "a gnuplot failure is one line of ours (exit $rc)"

# bad options: exit 2, one line naming the option
expect 2 "missing SCENARIO" "bench without SCENARIO" -- bench
expect 2 "unknown scenario 'frob'" "unknown scenario named" -- bench frob
expect 2 "unknown option '--frob'" "unknown option named" -- bench ops --frob
expect 2 "duration: bad value 'abc'" "bad --duration named" -- bench proc-vs-map --duration abc
expect 2 "duration: bad value '0'" "zero --duration" -- bench proc-vs-map --duration 0
expect 2 "samples: bad value '0'" "zero --samples" -- bench proc-vs-map --samples 0
expect 2 "mb: bad value '3'" "--mb not a power of two" -- bench proc-vs-map --mb 3
expect 2 "mb: bad value '3'" "run --mb not a power of two" -- run --mb 3
expect 2 "readers: bad value '1,x'" "bad --readers list" -- bench proc-vs-map --readers 1,x
expect 2 "busy: bad value '-1'" "negative --busy" -- bench proc-vs-map --busy -1
expect 2 "busyduration: bad value 'x'" "bad --busyduration" -- bench proc-vs-map --busyduration x
expect 2 "sizes: bad value '0'" "zero --sizes" -- bench read-cost --sizes 0
expect 2 "iterations: bad value '0'" "zero --iterations" -- bench ops --iterations 0
expect 2 "vmas: bad value '100000'" "too many --vmas" -- bench ops --vmas 100000
expect 2 "seed: bad value 'x'" "bad --seed" -- bench proc-vs-map --seed x
expect 2 "page-ns: bad value '-5'" "bad --page-ns" -- bench proc-vs-map --page-ns -5
expect 2 "policy: bad value 'x'" "bad --policy named" -- bench khugepaged --policy x
expect 2 "steal: bad value 'mainline,'" "bad --steal list" -- bench proc-vs-map --steal mainline,
expect 2 "skip-vmas: bad value 'x'" "bad --skip-vmas" -- bench khugepaged --skip-vmas x
expect 2 "view: unknown view 'bogus'" "bad --view named" -- bench proc-vs-map --view bogus
expect 2 "target: unknown target 'bogus'" "bad --target named" -- bench proc-vs-map --target bogus
expect 2 "lock: unknown policy 'rcu'" "bad --lock named" -- bench proc-vs-map --lock rcu
expect 2 "lock: bad value 'vma,'" "empty --lock item" -- bench proc-vs-map --lock vma,
expect 2 "lock vma-strict: only proc-vs-map" "vma-strict outside proc-vs-map" -- bench ops --lock vma-strict
expect 2 "kernel-transients: only proc-vs-map" "--kernel-transients outside proc-vs-map" -- bench read-cost --kernel-transients
expect 2 "plot: bad value 'x.pdf'" "--plot not png/svg" -- bench proc-vs-map --plot x.pdf
expect 2 "plot: ops has no plot" "--plot with ops" -- bench ops --plot x.png
expect 2 "threads: bad value '0'" "zero --threads" -- bench exec-churn --threads 0
expect 2 "i-mmap-order: unknown order 'mid'" "bad --i-mmap-order named" -- bench exec-churn --i-mmap-order mid
expect 2 "shmem-swap-usage: unknown value 'x'" "bad --shmem-swap-usage named" -- bench shmem-smaps --shmem-swap-usage x
expect 2 "size: bad value '1K'" "too small --size" -- bench shmem-smaps --size 1K
expect 2 "reads: bad value '0'" "zero --reads" -- bench shmem-smaps --reads 0
expect 2 "json needs a value" "--json without its value" -- bench proc-vs-map --json
expect 2 "quiet takes no value" "value on a flag" -- bench ops --quiet=yes
expect 2 "unexpected argument 'more'" "second SCENARIO" -- bench ops more
expect 2 "tool: empty command" "empty --tool" -- bench monitor --tool ''
expect 2 "tools: unknown tool 'frob'" "unknown --tools name" -- bench monitor --tools ps,frob
expect 2 "interval: bad value '0'" "zero --interval" -- bench monitor --interval 0
expect 2 "tool-nice: bad value '20'" "--tool-nice above 19" -- bench monitor --tool-nice 20
expect 2 "tool-timeout: bad value 'x'" "bad --tool-timeout" -- bench monitor --tool-timeout x
expect 2 "monitor needs the live kernel" "monitor on the model alone" -- bench monitor --target model
expect 2 "unknown option '--frob'" "run: unknown option named" -- run --frob
expect 2 "unexpected argument 'now'" "run: stray argument" -- run now
expect 2 "duration: bad value '-1'" "run: bad --duration" -- run --duration -1

vml bench --help
[ $? -eq 0 ] && grep -q proc-vs-map out && grep -q -- '--busyduration' out && \
	grep -q -- '--tool ' out && grep -q 'prometheus-process-exporter' out
ok $? "bench --help"
vml run --help
[ $? -eq 0 ] && grep -q vmalock-run.json out
ok $? "run --help"

done_tap
