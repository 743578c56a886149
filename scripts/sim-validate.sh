#!/bin/sh
# sim-validate.sh VMALOCK [RUNS [COSTS]]: the simulated machine at this
# host's size against the live kernel, in the same runs (issue 23's check):
# RUNS times (default 5) `vmalock run --target live --cpus 2 --lock mmap
# --readers 1,4`, the simulated rows beside the live ones; then a table per
# run and reader count: sim/live for avg, p99 and max ('*' beyond 2x), and
# each side's regime (fast: p50 under 1 ms). COSTS: a saved table of
# charges (--sim-costs); without it each run measures its own. The runs'
# JSON documents stay in $SIM_VALIDATE_OUT (default: a new /tmp directory).
set -u
vmalock=$(cd "$(dirname "${1:?usage: sim-validate.sh VMALOCK [RUNS [COSTS]]}")" && pwd)/$(basename "$1")
runs=${2:-5}
costs=${3:+$(cd "$(dirname "$3")" && pwd)/$(basename "$3")}
out=${SIM_VALIDATE_OUT:-$(mktemp -d /tmp/sim-validate.XXXXXX)}
for i in $(seq 1 "$runs"); do
	echo "run $i of $runs ..." >&2
	( cd "$out" && "$vmalock" run --target live --cpus 2 --lock mmap --readers 1,4 \
		${costs:+--sim-costs "$costs"} --json "run$i.json" --plot "run$i.png" --quiet \
		>"run$i.txt" 2>"run$i.err" ) || { echo "run $i failed: $out/run$i.err" >&2; exit 1; }
done
python3 - "$out" "$runs" <<'PY'
import json, sys
out, runs = sys.argv[1], int(sys.argv[2])
def mark(r):
    return "%.2fx%s" % (r, "*" if r > 2 or r < 0.5 else "")
def regime(row):
    return "fast" if row["p50_us"] < 1000 else "slow"
print("run readers | avg sim/live  p99 sim/live  max sim/live | regime sim/live | live avg, p99, max (us)")
within = total = 0
for i in range(1, runs + 1):
    d = json.load(open("%s/run%d.json" % (out, i)))
    rows = d["rows"]
    for n in (1, 4):
        s = [r for r in rows if r.get("sim") and r["readers"] == n]
        l = [r for r in rows if r["target"] == "live" and r["readers"] == n]
        if not s or not l:
            continue
        s, l = s[0], l[0]
        ratios = [s[k] / l[k] if l[k] else 0 for k in ("avg_us", "p99_us", "max_us")]
        within += all(0.5 <= r <= 2 for r in ratios)
        total += 1
        print("%3d %7d | %12s  %12s  %12s | %6s/%-6s | %.0f, %.0f, %.0f" % (
            i, n, *(mark(r) for r in ratios), regime(s), regime(l),
            l["avg_us"], l["p99_us"], l["max_us"]))
print("%d of %d (run, readers) within 2x on avg, p99 and max; documents in %s" % (within, total, out))
# The spread over the runs, each side: where one side is steadier, its
# figures still have to fall inside the other's range to mean anything.
print("readers side  | avg min-max (us)      | p99 min-max (us)      | max min-max (us)      | regimes")
for n in (1, 4):
    for side in ("sim", "live"):
        rs = []
        for i in range(1, runs + 1):
            d = json.load(open("%s/run%d.json" % (out, i)))
            rs += [r for r in d["rows"] if r["readers"] == n and
                   (r.get("sim") if side == "sim" else r["target"] == "live")]
        if not rs:
            continue
        rng = lambda k: "%9.0f-%-9.0f" % (min(r[k] for r in rs), max(r[k] for r in rs))
        print("%7d %-5s | %s | %s | %s | %s" % (n, side, rng("avg_us"), rng("p99_us"),
              rng("max_us"), ",".join(regime(r) for r in rs)))
PY
