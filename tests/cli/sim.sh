#!/bin/sh
# sim.sh VMALOCK COSTS: the simulated machine (docs/simulation.md) through
# `vmalock run` and `bench proc-vs-map`, on a saved table of charges (COSTS)
# so that nothing depends on this machine: the same seed gives the same
# bytes, rows say sim and their CPU count, an 8-CPU machine in Paul's
# layout runs, and bad options are refused. TAP output.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
costs=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

expect 2 "sim-only: needs --cpus N" "--sim-only alone" -- bench proc-vs-map --sim-only
expect 2 "sim-costs: needs --cpus N" "--sim-costs alone" -- bench proc-vs-map --sim-costs "$costs"
expect 2 "cpus: only proc-vs-map, khugepaged, exec-churn, vma-wait and faults" \
	"--cpus on a scenario without a simulated machine" -- bench shmem-smaps --cpus 4
expect 2 "cpus: bad value '0'" "zero CPUs" -- bench proc-vs-map --cpus 0
expect 2 "busy-cpus 4: at most 3 with --cpus 4" "--busy-cpus leaves CPU 0 to the mapper" -- \
	bench proc-vs-map --cpus 4 --busy-cpus 4
expect 2 "busy-cpus: needs --cpus N" "--busy-cpus without a simulated machine" -- \
	bench proc-vs-map --busy-cpus 2
expect 1 "sim-costs $tmp/none.json" "a missing table is named" -- \
	bench proc-vs-map --cpus 2 --sim-only --sim-costs "$tmp/none.json"
echo '{"sim_costs": {"ctxsw_ns": "fast"}}' >bad.json
expect 1 "sim_costs.ctxsw_ns: missing or not a number" "a bad table says which field" -- \
	bench proc-vs-map --cpus 2 --sim-only --sim-costs bad.json

# The same command twice: the same bytes on stdout, the same rows in the JSON.
sim_run() {
	mkdir -p "$1" && cd "$1" &&
	vml run --cpus 2 --sim-only --sim-seed 1 --sim-costs "$costs" --duration 0.3 --samples 2 \
		--quiet
	rc=$?
	cd "$tmp" && cp "$1/out" "$1.out" && cp "$1/err" "$1.err"
	return $rc
}
sim_run a; rc_a=$?
sim_run b; rc_b=$?
cp a.out out; cp a.err err
[ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] && cmp -s a.out b.out
ok $? "run --cpus 2 --sim-seed 1 twice: identical output"
rows() {
	python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["rows"], sort_keys=True))' "$1"
}
[ -s a/vmalock-run.json ] && [ "$(rows a/vmalock-run.json)" = "$(rows b/vmalock-run.json)" ]
ok $? "...and identical rows in the JSON"
python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 6, len(rows)
for r in rows:
    assert r["sim"] is True and r["cpus"] == 2 and r["target"] == "model", r
    assert r["ops"] > 0, r
' a/vmalock-run.json
ok $? "every row is simulated, on 2 CPUs, and the mapper made calls"
grep -q '^verdict (simulated, 2 CPUs, smaps, 1 reader): mmap/vma:' a.out
ok $? "the verdict puts the simulated policies side by side"
grep -q '^# simulated machine.s charges (ns; .*sim-costs.json)' a.out
ok $? "the table of charges is printed, with where it came from"

# Another seed runs too (its figures may differ).
vml run --cpus 2 --sim-only --sim-seed 7 --sim-costs "$costs" --duration 0.2 --samples 1 \
	--readers 1 --lock mmap --json c.json --plot c.png --quiet
ok $? "another seed runs"

# Eight CPUs in Paul's layout: two busy CPUs, a reader and a hog on each.
vml bench proc-vs-map --cpus 8 --busy-cpus 2 --busy 1 --busyduration 2 --readers 2 \
	--view smaps --sim-only --sim-costs "$costs" --duration 0.3 --samples 1 --json p.json \
	--quiet
rc=$?
[ $rc -eq 0 ] && grep -q 'readers (nice 15) spread over CPUs 6-7 with 1 hog(s) on each' out &&
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["sim"]["cpus"] == 8 and d["meta"]["sim"]["busy_cpus"] == 2, d["meta"]
for r in d["rows"]:
    assert r["sim"] and r["cpus"] == 8 and r["ops"] > 0 and r["views_read"] > 0, r
' p.json
ok $? "an 8-CPU machine in Paul's layout runs, both policies"

# --trace on a simulated row: the model's own events in virtual time, analysed
# as the kernel's are; the reader's way back to the lock includes the waker's
# IPI (3 us in the table), so its release -> next attempt gap is at least that.
vml bench proc-vs-map --cpus 2 --sim-only --sim-costs "$costs" --readers 1 --lock mmap \
	--view smaps --duration 0.3 --samples 1 --trace --trace-events ev.txt --quiet
rc=$?
[ $rc -eq 0 ] && grep -q '^# sim: the model.s own events in virtual time' out &&
awk '$1 == "sim" && $2 == "mmap" && $5 > 0 { found = 1 } END { exit !found }' out &&
grep -q '^# sample 1: sim mmap mainline' ev.txt && grep -q 'sched_wakeup by' ev.txt
ok $? "--trace on a simulated row: a sim row in the lock dynamics, its events in the file"
python3 - ev.txt <<'PY'
import sys
# a reader's release that woke the mapper (on CPU 0, idle while it waits) -> its next attempt
# (the first wake of it since it last ran: later ones find it on its way)
rel, woke, gaps, in_flight = {}, {}, [], set()
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    f = line.split()
    t, cpu, pid, ev = float(f[0]), f[1], f[2], f[4]
    if ev == "sched_switch":
        in_flight.discard(pid)
    if ev == "sched_wakeup" and pid not in in_flight:
        in_flight.add(pid)
        if f[6] in rel and t - rel[f[6]][0] < 1.0:
            woke[f[6]] = rel.pop(f[6])[0]
    if len(f) < 7 or f[5] != "mmap_lock":
        continue
    if ev == "released" and f[6] == "read":
        rel[pid] = (t, cpu)
    elif ev == "start_locking" and f[6] == "read" and pid in woke:
        gaps.append(t - woke.pop(pid))
gaps.sort()
assert len(gaps) > 10 and gaps[0] >= 3.0, (len(gaps), gaps[:5])
PY
ok $? "a reader that wakes the waiting mapper pays the IPI before its next attempt"

# The release race's legs drawn from a measured spread (sim_costs.way_back_ns,
# switch_in_ns): still the same bytes for the same seed; and they decide the
# race: a reader back in 1-2 us against a mapper running 30-40 us after the
# release steals every time (slow: the mapper waits for hand-off), a reader
# back in 40-50 us against 4-6 us never does (fast).
legs() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["sim_costs"]["way_back_ns"] = [int(x) for x in sys.argv[3].split(",")]
d["sim_costs"]["switch_in_ns"] = [int(x) for x in sys.argv[4].split(",")]
json.dump(d, open(sys.argv[2], "w"))' "$costs" "$@"
}
legs slow.json 1000,1100,1200,1300,1400,1500,1600,1800,2000 \
	30000,31000,32000,33000,34000,35000,36000,38000,40000
legs fast.json 40000,41000,42000,43000,44000,45000,46000,48000,50000 \
	4000,4200,4400,4600,4800,5000,5200,5500,6000
leg_run() {
	vml bench proc-vs-map --cpus 2 --sim-only --sim-costs "$1" --readers 1 --lock mmap \
		--view smaps --duration 0.5 --samples 1 --json "$2" --quiet
}
leg_run slow.json s1.json && cp out s1.out && leg_run slow.json s2.json && cmp -s out s1.out &&
grep -q "^#   a reader's way back between read()s (drawn for read()'s charge), p10..p90: 1000 " out &&
grep -q "^#   release -> woken writer's switch-in (drawn for an idle CPU's wake-up), p10..p90: 30000 " out
ok $? "legs drawn from a spread: the same bytes twice, both legs printed"
leg_run fast.json f.json
python3 -c '
import json, sys
slow = json.load(open(sys.argv[1]))["rows"][0]
fast = json.load(open(sys.argv[2]))["rows"][0]
assert json.load(open(sys.argv[1]))["sim_costs"]["way_back_ns"][0] == 1000
assert slow["p50_us"] > 1000 and fast["p50_us"] < 200, (slow["p50_us"], fast["p50_us"])
' s1.json f.json
ok $? "the legs decide the race: a reader back first waits out hand-off, one back late never does"
legs bad.json 5000,4000,6000,7000,8000,9000,10000,11000,12000 \
	4000,4200,4400,4600,4800,5000,5200,5500,6000
expect 1 "sim_costs.way_back_ns\[1\]: not a number > 0 and >= the one before" \
	"a leg's deciles must not fall" -- \
	bench proc-vs-map --cpus 2 --sim-only --sim-costs bad.json --samples 1

# The way in by the mapper's sleep (switch_in_short_ns, for a CPU idle less
# than 100 us): printed apart and kept in the JSON; with the slow table's
# legs but a mapper back 0.2-0.6 us after a short sleep, a lost race no
# longer starts a losing streak (fast); a short leg alone is refused.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["sim_costs"]["switch_in_short_ns"] = [200, 250, 300, 350, 400, 450, 500, 550, 600]
d["sim_costs"]["race_won_short"] = 0.6
d["sim_costs"]["race_won_long"] = 0.05
json.dump(d, open("split.json", "w"))
d["sim_costs"].pop("switch_in_ns")
json.dump(d, open("shortonly.json", "w"))' slow.json
leg_run split.json sp.json &&
grep -q "^#   \.\.\. after a shorter sleep (drawn for a CPU idle < 100 us), p10\.\.p90: 200 " out &&
grep -q "mapper won 60% of the races after a short sleep, 5% after a long one" out &&
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = d["sim_costs"]
assert c["switch_in_short_ns"][0] == 200 and c["race_won_short"] == 0.6, c
assert d["rows"][0]["p50_us"] < 200, d["rows"][0]["p50_us"]' sp.json
ok $? "the way in by the mapper's sleep: printed, kept, and a lost race no longer starts a streak"
expect 1 "sim_costs.switch_in_short_ns without switch_in_ns" \
	"a short way in needs the longer idles' one" -- \
	bench proc-vs-map --cpus 2 --sim-only --sim-costs shortonly.json --samples 1

# khugepaged on the simulated machine: the table's cost a VMA (200 ns) makes
# 6.18's hold one walk of the 20k ineligible VMAs (4 ms) and the series' one
# batch of 1024 (0.2 ms); without a cost and without the live row, a clear no.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["sim_costs"]["scan_vma_ns"] = 200
json.dump(d, open("kc.json", "w"))
' "$costs"
vml bench khugepaged --cpus 2 --sim-only --sim-costs kc.json --skip-vmas 20k --samples 1 \
	--duration 1 --json k.json --quiet
rc=$?
[ $rc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["policy"]: r for r in d["rows"]}
assert all(r["sim"] and r["cpus"] == 2 for r in rows.values()), rows
assert 4.0 <= rows["mainline"]["max_hold_ms"] < 4.5, rows["mainline"]
assert 0.2 <= rows["fixed"]["max_hold_ms"] < 0.3, rows["fixed"]
assert d["sim_costs"]["scan_vma_ns"] == 200, d["sim_costs"]
' k.json
ok $? "khugepaged, simulated: 6.18 holds the lock for the whole walk, the series for a batch"
vml bench khugepaged --cpus 3 --mappers 3 --sim-only --sim-costs kc.json --skip-vmas 2000 \
	--samples 1 --duration 0.5 --policy mainline --json k3.json --quiet
rc=$?
[ $rc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["mappers"] == 3, d["meta"]
assert d["rows"][0]["sim"] and d["rows"][0]["cpus"] == 3, d["rows"]
' k3.json && grep -q "3 mappers contending" out
ok $? "khugepaged, simulated: three mappers on three CPUs"
expect 2 "mappers 2: with --cpus N --sim-only" "--mappers needs the simulated machine alone" -- \
	bench khugepaged --mappers 2 --skip-vmas 1000
expect 2 "mappers 4: at most one a CPU (--cpus 2)" "--mappers beyond the CPUs" -- \
	bench khugepaged --cpus 2 --sim-only --mappers 4 --skip-vmas 1000
expect 1 "the simulated rows need the kernel's cost of a VMA scanned" \
	"khugepaged, simulated, without a cost a VMA: said" -- \
	bench khugepaged --cpus 2 --sim-only --sim-costs "$costs" --skip-vmas 1000 --samples 1

# vma-wait on the simulated machine: a munmap inside a VMA being zapped under
# its read lock waits for the rest of the zap; one in another VMA does not.
vml bench vma-wait --cpus 2 --sim-only --sim-costs "$costs" --samples 2 --mb 16 --json w.json \
	--quiet
rc=$?
[ $rc -eq 0 ] && python3 -c '
import json, sys
rows = {r["munmap"]: r for r in json.load(open(sys.argv[1]))["rows"] if r.get("sim")}
assert rows["same"]["waited_over_left"] > 0.8, rows["same"]
assert rows["other"]["waited_over_left"] < 0.2, rows["other"]
' w.json
ok $? "vma-wait, simulated: the munmap inside the zapped VMA waits for the rest of the zap"
# Four zappers of the one VMA on CPUs of their own, slices of 1-4 shares: the
# munmap inside waits for the last reader, long after the first has ended.
vml bench vma-wait --cpus 5 --sim-only --sim-costs "$costs" --samples 1 --mb 32 --zappers 4 \
	--json w4.json --quiet
rc=$?
[ $rc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["zappers"] == 4, d["meta"]
rows = {r["munmap"]: r for r in d["rows"] if r.get("sim")}
same = rows["same"]
assert same["per_sample"][0]["zappers_in"] >= 2, same
assert same["waited_over_left"] > 0.8 and same["waited_over_first_left"] > 2, same
assert rows["other"]["waited_over_left"] < 0.2, rows["other"]
' w4.json
ok $? "vma-wait, simulated, 4 zappers: the munmap waits for every reader of the VMA, not the first"
expect 2 "zappers: bad value '17'" "--zappers beyond 16" -- bench vma-wait --zappers 17

done_tap
