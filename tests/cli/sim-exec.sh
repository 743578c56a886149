#!/bin/sh
# sim-exec.sh VMALOCK COSTS: bench exec-churn on the simulated machine
# (docs/simulation.md) from a saved table (COSTS): the same seed gives the
# same bytes, rows say sim and their CPU count, the tree store inside the
# pre order's write sections lengthens them, and a table without exec_ns
# is refused. Small (8 CPUs, 0.05 s): a few seconds. TAP output.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
costs=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
del d["sim_costs"]["exec_ns"]
json.dump(d, open("noexec.json", "w"))
' "$costs"
expect 1 "no sim_costs.exec_ns" "a table without exec_ns is refused, the field named" -- \
	bench exec-churn --cpus 2 --sim-only --sim-costs noexec.json

# The same command twice: the same bytes on stdout and the same rows in the JSON.
run() {
	vml bench exec-churn --cpus 8 --threads 8 --duration 0.05 --samples 1 --sim-only \
		--sim-costs "$costs" --sim-seed 1 --quiet --json "$1.json"
	rc=$?
	cp out "$1.out"
	return $rc
}
run a; rc_a=$?
run b; rc_b=$?
[ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] && cmp -s a.out b.out
ok $? "exec-churn --cpus 8 --sim-seed 1 twice: identical output"
rows() {
	python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["rows"], sort_keys=True))' "$1"
}
[ "$(rows a.json)" = "$(rows b.json)" ]
ok $? "...and identical rows in the JSON"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["order"]: r for r in d["rows"]}
assert sorted(rows) == ["post", "pre"], rows.keys()
for r in rows.values():
    assert r["sim"] is True and r["cpus"] == 8 and r["threads"] == 8, r
    assert r["execs_per_s"] > 0 and r["sections_per_exec"] > 0, r
assert d["meta"]["sim"]["cpus"] == 8 and d["sim_costs"]["exec_ns"] > 0, d["meta"]
# the store (vma_store_ns) is inside the pre sections that map a new VMA
store = d["sim_costs"]["vma_store_ns"]
assert rows["pre"]["hot_hold_ns"] > rows["post"]["hot_hold_ns"] + store / 8, rows
' a.json
ok $? "every row simulated on 8 CPUs; pre holds the hottest lock longer by the store"
grep -q '^verdict (simulated, 8 CPUs, 8 threads): post/pre ' a.out &&
grep -q '^#   exec-churn: i_mmap insert [0-9]*, remove [0-9]*, mm tree store' a.out
ok $? "the verdict compares the orders; the table prints exec-churn's charges"

done_tap
