#!/bin/sh
# sim-faults.sh VMALOCK COSTS: `bench faults` on the simulated machine,
# from a saved table with the cache-line transfer (COSTS): the same seed
# gives the same bytes, rows say sim and their CPU count, and at 8 CPUs the
# faults under mmap_lock fall behind the per-VMA ones a CPU - with the
# cache line modelled, not with the same table less line_xfer_ns (as the
# tables before it: the check fails if the transfers stop being charged).
# TAP output.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
costs=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

expect 2 "cpus: one N (only faults takes a list)" "a list of CPU counts elsewhere" -- \
	bench proc-vs-map --cpus 2,4 --sim-only
expect 2 "faults has model rows on the simulated machine only" "faults' model rows need --cpus" -- \
	bench faults --target model
expect 2 "cpus: faults runs up to 64 CPUs" "faults above 64 CPUs" -- \
	bench faults --cpus 128 --sim-only --sim-costs "$costs"

# The same command twice: the same bytes on stdout, the same rows in the JSON.
faults() {	# DIR TABLE
	mkdir -p "$1" && cd "$1" &&
	vml bench faults --cpus 1,8 --sim-only --sim-seed 3 --sim-costs "$2" \
		--sim-duration 0.0005 --quiet --json f.json
	rc=$?
	cd "$tmp" && cp "$1/out" "$1.out"
	return $rc
}
faults a "$costs"; rc_a=$?
faults b "$costs"; rc_b=$?
[ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] && cmp -s a.out b.out
ok $? "faults --cpus 1,8 --sim-seed 3 twice: identical output"
rows() {
	python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["rows"], sort_keys=True))' "$1"
}
[ -s a/f.json ] && [ "$(rows a/f.json)" = "$(rows b/f.json)" ]
ok $? "...and identical rows in the JSON"
grep -q '^#   cache line: an atomic.s transfer from another CPU 32$' a.out
ok $? "the table's transfer is printed"

# per_cpu FILE LOCK CPUS: that row's faults a second a CPU
per_cpu() {
	python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 4, len(rows)
for r in rows:
    assert r["sim"] is True and r["target"] == "model" and r["faults"] > 0, r
got = [r for r in rows if r["lock"] == sys.argv[2] and r["cpus"] == int(sys.argv[3])]
print(int(got[0]["faults_per_s_per_cpu"]))' "$@"
}
m8=$(per_cpu a/f.json mmap 8) && v8=$(per_cpu a/f.json vma 8) && [ "$m8" -lt "$v8" ]
ok $? "8 CPUs, cache line modelled: mmap_lock ${m8:-?} faults/s a CPU < per-VMA ${v8:-?}"
python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
m = [r for r in rows if r["lock"] == "mmap" and r["cpus"] == 8][0]
v = [r for r in rows if r["lock"] == "vma" and r["cpus"] == 8][0]
assert m["line_xfers"] >= 2 * m["faults"], m
assert v["line_xfers"] * 100 < v["faults"], v' a/f.json
ok $? "...mmap_lock moves the count's line twice a fault, per-VMA locks nearly never"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
del d["sim_costs"]["line_xfer_ns"]
json.dump(d, open("no-line.json", "w"))' "$costs"
faults c "$tmp/no-line.json"; rc_c=$?
m8=$(per_cpu c/f.json mmap 8) && v8=$(per_cpu c/f.json vma 8) && [ $rc_c -eq 0 ] && \
	[ "$m8" -ge "$v8" ]
ok $? "8 CPUs, the table less line_xfer_ns: mmap_lock ${m8:-?} >= per-VMA ${v8:-?} (nothing bounces)"
done_tap
