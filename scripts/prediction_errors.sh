#!/usr/bin/env bash
# The planner's predicted step against the simulated one, for every shipped cluster config
# (configs/cluster/*.yaml) and every planner: the tables in docs/planner.md, "Predictions".
#   bash scripts/prediction_errors.sh [--all-networks] [CONFIG ...]
#   bash scripts/prediction_errors.sh --random N [--seed S] [--max-nodes M]
# Runs `fastsim compare CONFIG --simulate` on each (with --all-networks, on every shipped
# network trace instead of the config's own) and prints a Markdown table. With --random, on N
# random heterogeneous clusters of 4-256 nodes (scripts/random_clusters.py) instead, and prints
# the distribution of the errors by cluster size and planner.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
bash scripts/setup.sh >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
rm -f "$log"
if [[ ${1:-} == --random ]]; then
  shift
  count=${1:?--random needs a count of clusters}
  shift
  exec python3 scripts/random_clusters.py measure "$count" "$@"
fi
traces=()
if [[ ${1:-} == --all-networks ]]; then
  shift
  for t in alexnet vgg11 vgg16 resnet18 resnet50 bert_base_encoder; do traces+=(--trace "traces/$t.yaml"); done
fi
configs=("$@")
((${#configs[@]})) || configs=(configs/cluster/*.yaml)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| config | network | planner | planned ms | simulated ms | error % |"
echo "|---|---|---|---|---|---|"
for config in "${configs[@]}"; do
  build/fastsim compare "$config" "${traces[@]}" --simulate --out "$out/c" --force >/dev/null
  awk -F, -v config="$(basename "$config")" 'NR > 1 && $4 != "" {
    printf "| %s | %s | %s | %.3f | %.3f | %+.1f |\n", config, $1, $2, $4 * 1e3, $5 * 1e3, $6 * 100 }' "$out/c/compare.csv"
done
