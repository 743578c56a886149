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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
n=0
failed=0

ok() {	# ok COND-EXIT-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		sed 's/^/#   /' out err 2>/dev/null
	fi
}

# Every JSON document written is read, written and read again unchanged
# through the project's JSON layer (tests/target/test-json.c).
roundtrip() {
	[ -n "$test_json" ] || return 0
	"$test_json" "$@"
}

# expect PATTERN DESCRIPTION -- ARGS...: exit 2 and one stderr line matching PATTERN
expect() {
	pattern=$1 desc=$2
	shift 3
	"$vmalock" "$@" >out 2>err
	rc=$?
	lines=$(wc -l <err)
	[ $rc -eq 2 ] && grep -q -- "$pattern" err && [ "$lines" -eq 1 ]
	ok $? "$desc (exit $rc)"
}

# check_json FILE SCENARIO SAMPLES TARGET: the JSON's schema, by scenario
check_json() {
	python3 - "$@" <<'PY'
import json, sys
path, scenario, samples, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
num = (int, float)
assert d["scenario"] == scenario, d["scenario"]
assert isinstance(d["samples"], int) and d["samples"] == samples
rows = d["rows"]
assert isinstance(rows, list) and rows, "no rows"
targets = {"model", "live"} if target == "both" else {target}
if scenario == "proc-vs-map":
    assert d["view"] in ("maps", "smaps", "smaps_rollup", "numa_maps", "query")
    assert isinstance(d["duration_s"], num)
    for r in rows:
        assert r["target"] in ("model", "live"), r
        assert r["lock"] == ("kernel" if r["target"] == "live" else r["lock"]), r
        assert r["lock"] in ("mmap", "vma", "kernel"), r
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
    assert {r["target"] for r in rows} == targets, rows
    assert isinstance(d["ratios"], list)
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
"$vmalock" bench proc-vs-map --target "$target" $lock_args $tiny --readers 0,1 \
	--json pvm.json --plot pvm.svg >out 2>err
rc=$?
rows=$(grep -cE '^(model|live) +(mmap|vma|kernel) +[0-9]+ ' out)
want=2; [ "$target" = both ] && want=6
[ $rc -eq 0 ] && [ "$rows" -eq $want ] && grep -q '^target  *lock  *readers  *max_med' out
ok $? "proc-vs-map prints a table of $want rows"
check_json pvm.json proc-vs-map 2 "$target" >err 2>&1 && roundtrip pvm.json 2>>err
ok $? "proc-vs-map JSON has the schema"
grep -q '<svg' pvm.svg 2>/dev/null
ok $? "proc-vs-map --plot writes an SVG"
"$vmalock" bench proc-vs-map --target "$target" $tiny --samples 1 --readers 1 --busy 1 \
	--busyduration 1 --view query >out 2>err
rc=$?
[ $rc -eq 0 ] && grep -q 'view query' out && grep -q 'sample 1/1' err
ok $? "proc-vs-map with a hog, the query view, and a progress line per sample"

# read-cost: small layouts, a JSON and a PNG
"$vmalock" bench read-cost --target "$target" --sizes 100,1k --samples 2 --json rc.json \
	--plot rc.png --quiet >out 2>err
rc=$?
[ $rc -eq 0 ] && [ ! -s err ] && grep -q '^ *size  *vmas  *mmap' out && \
	[ "$(grep -cE '^ +(100|1000) ' out)" -eq 2 ]
ok $? "read-cost prints one row per size"
check_json rc.json read-cost 2 "$target" >err 2>&1 && roundtrip rc.json 2>>err
ok $? "read-cost JSON has the schema"
head -c 8 rc.png 2>/dev/null | grep -q PNG
ok $? "read-cost --plot writes a PNG"

# ops
"$vmalock" bench ops --target "$target" --samples 2 --iterations 50 --vmas 50 --json ops.json \
	--quiet >out 2>err
rc=$?
[ $rc -eq 0 ] && grep -q '^mmap+munmap (1 page) ' out && grep -q '^write fault (1 page) ' out && \
	grep -q '^maps read per VMA' out && grep -q 'model/live' out
ok $? "ops prints the table"
check_json ops.json ops 2 "$target" >err 2>&1 && roundtrip ops.json 2>>err
ok $? "ops JSON has the schema"

# khugepaged (model rows; the live row changes system settings: suite system): the
# policies, a JSON
if [ "$target" = both ]; then
	"$vmalock" bench khugepaged --target model --skip-vmas 2000 --ranges 2 --samples 1 \
		--duration 2 --uncollapsible 1 --json kh.json >out 2>err
	[ $? -eq 0 ] && grep -qE '^model +mainline +nosteal ' out && \
		grep -qE '^model +fixed +nosteal ' out && grep -q 'model fixed (nosteal) / mainline' out
	ok $? "bench khugepaged: a row per policy and the ratios"
	python3 - kh.json >err 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["scenario"] == "khugepaged" and d["samples"] == 1 and d["uncollapsible"] == 1
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
	"$vmalock" bench khugepaged --target model --skip-vmas 3000 --ranges 1 --samples 1 \
		--duration 2 --policy all --steal mainline,not-behind-writer --quiet >out 2>err
	[ $? -eq 0 ] && [ "$(grep -cE '^model +(mainline|resume|skip|drop|fixed) +(mainline|not-behind-writer) ' out)" -eq 10 ]
	ok $? "bench khugepaged --policy all --steal LIST: a row per fix and steal policy"
	"$vmalock" bench proc-vs-map --target model --lock mmap --view smaps_rollup $tiny \
		--samples 1 --readers 1 --steal all --trace --quiet >out 2>err
	# four rows in the table, four in the traced one
	[ $? -eq 0 ] && grep -q '^# lock dynamics from traces' out && \
		[ "$(grep -cE '^model +mmap +(mainline|nosteal|not-behind-writer|never) +1 +[0-9]' out)" -eq 8 ]
	ok $? "proc-vs-map --steal all --trace: a row per steal policy and the traced table"
fi

# run: the table, the files and a two-line verdict
"$vmalock" run --target "$target" $tiny --samples 1 --quiet >out 2>err
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^verdict' out)" -eq 3 ] && [ -s vmalock-run.json ] && \
	head -c 8 vmalock-run.png | grep -q PNG
ok $? "run prints a verdict and writes vmalock-run.json and vmalock-run.png"
check_json vmalock-run.json proc-vs-map 1 "$target" >err 2>&1 && python3 - <<'PY' >err 2>&1
import json
d = json.load(open("vmalock-run.json"))
assert sorted({r["readers"] for r in d["rows"]}) == [0, 1, 4], d["rows"]
PY
[ $? -eq 0 ] && roundtrip vmalock-run.json 2>>err
ok $? "run's JSON has the schema and rows for 0, 1 and 4 readers"

# bad options: exit 2, one line naming the option
expect "missing SCENARIO" "bench without SCENARIO" -- bench
expect "unknown scenario 'frob'" "unknown scenario named" -- bench frob
expect "unknown option '--frob'" "unknown option named" -- bench ops --frob
expect "duration: bad value 'abc'" "bad --duration named" -- bench proc-vs-map --duration abc
expect "duration: bad value '0'" "zero --duration" -- bench proc-vs-map --duration 0
expect "samples: bad value '0'" "zero --samples" -- bench proc-vs-map --samples 0
expect "mb: bad value '3'" "--mb not a power of two" -- bench proc-vs-map --mb 3
expect "readers: bad value '1,x'" "bad --readers list" -- bench proc-vs-map --readers 1,x
expect "busy: bad value '-1'" "negative --busy" -- bench proc-vs-map --busy -1
expect "busyduration: bad value 'x'" "bad --busyduration" -- bench proc-vs-map --busyduration x
expect "sizes: bad value '0'" "zero --sizes" -- bench read-cost --sizes 0
expect "iterations: bad value '0'" "zero --iterations" -- bench ops --iterations 0
expect "vmas: bad value '100000'" "too many --vmas" -- bench ops --vmas 100000
expect "seed: bad value 'x'" "bad --seed" -- bench proc-vs-map --seed x
expect "policy: bad value 'x'" "bad --policy named" -- bench khugepaged --policy x
expect "steal: bad value 'mainline,'" "bad --steal list" -- bench proc-vs-map --steal mainline,
expect "skip-vmas: bad value 'x'" "bad --skip-vmas" -- bench khugepaged --skip-vmas x
expect "view: unknown view 'bogus'" "bad --view named" -- bench proc-vs-map --view bogus
expect "target: unknown target 'bogus'" "bad --target named" -- bench proc-vs-map --target bogus
expect "lock: unknown policy 'rcu'" "bad --lock named" -- bench proc-vs-map --lock rcu
expect "plot: bad value 'x.pdf'" "--plot not png/svg" -- bench proc-vs-map --plot x.pdf
expect "plot: ops has no plot" "--plot with ops" -- bench ops --plot x.png
expect "json needs a value" "--json without its value" -- bench proc-vs-map --json
expect "quiet takes no value" "value on a flag" -- bench ops --quiet=yes
expect "unexpected argument 'more'" "second SCENARIO" -- bench ops more
expect "unknown option '--frob'" "run: unknown option named" -- run --frob
expect "unexpected argument 'now'" "run: stray argument" -- run now
expect "duration: bad value '-1'" "run: bad --duration" -- run --duration -1

"$vmalock" bench --help >out 2>err
[ $? -eq 0 ] && grep -q proc-vs-map out && grep -q -- '--busyduration' out
ok $? "bench --help"
"$vmalock" run --help >out 2>err
[ $? -eq 0 ] && grep -q vmalock-run.json out
ok $? "run --help"

echo "1..$n"
[ $failed -eq 0 ]
