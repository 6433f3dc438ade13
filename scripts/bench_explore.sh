#!/usr/bin/env bash
# The sampled search of `fastsim explore` against random search with ten times its budget, on
# configs/bench/explore_large.yaml (283,500 node designs): wall time and peak memory of each, and
# how many members of each front a design of the other dominates. Figures go in
# docs/performance.md ("Design-space exploration"). Usage: scripts/bench_explore.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/fastsim-bench-explore}
space=configs/bench/explore_large.yaml
[ -x build/fastsim ] || bash scripts/setup.sh >/dev/null
rm -rf "$out" && mkdir -p "$out"
budget=$(sed -n 's/^  budget: *//p' "$space")
# The random baseline: the same space and seed, method random, ten times the budget.
sed -e "s/^  budget: .*/  budget: $((10 * budget))/" -e "s/^  seed: .*/  seed: 2\n  method: random/" \
    -e "s|base: \.\./quickstart.yaml|base: $PWD/configs/quickstart.yaml|" \
    -e "s|workload.trace: \.\./traces/|workload.trace: $PWD/traces/|" "$space" > "$out/random.yaml"
for run in sampled random; do
  file=$space; [ $run = random ] && file=$out/random.yaml
  /usr/bin/time -f "$run: %e s wall, peak RSS %M KiB" taskset -c 0 build/fastsim explore "$file" --out "$out/$run" 2>&1 |
    grep -v '^explore: '
done
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
def front(run):
    rows = list(csv.DictReader(open(f"{out}/{run}/pareto.csv")))
    return [tuple(float(r[k]) for k in ("time_ms", "energy_uj", "area_mm2")) for r in rows]
def dominates(a, b):
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))
s, r = front("sampled"), front("random")
beaten = sum(any(dominates(x, f) for x in r) for f in s)
covered = sum(any(dominates(x, f) for x in s) for f in r)
print(f"sampled front {len(s)} designs: {beaten} dominated by a design of the random search")
print(f"random front {len(r)} designs: {covered} dominated by a design of the sampled search")
PY
