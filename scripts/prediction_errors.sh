#!/usr/bin/env bash
# The planner's predicted step against the simulated one, for every shipped cluster config
# (configs/cluster/*.yaml) and every planner: the table in docs/planner.md, "Predictions".
#   bash scripts/prediction_errors.sh [CONFIG ...]
# Runs `fastsim compare CONFIG --simulate` on each and prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
bash scripts/setup.sh >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
rm -f "$log"
configs=("$@")
((${#configs[@]})) || configs=(configs/cluster/*.yaml)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| config | network | planner | planned ms | simulated ms | error % |"
echo "|---|---|---|---|---|---|"
for config in "${configs[@]}"; do
  build/fastsim compare "$config" --simulate --out "$out/c" >/dev/null
  awk -F, -v config="$(basename "$config")" 'NR > 1 && $4 != "" {
    printf "| %s | %s | %s | %.3f | %.3f | %+.1f |\n", config, $1, $2, $4 * 1e3, $5 * 1e3, $6 * 100 }' "$out/c/compare.csv"
done
