#!/usr/bin/env bash
# Accuracy and simulated time of data-parallel training with each gradient-sync scheme
# (docs/compression.md, "In training"): K = 8 workers, the MLP under bfp_m8, 10 epochs.
#   bash scripts/compression_training.sh [OUT_DIR]       (about 25 minutes on one core)
# FASTSIM=path overrides the binary (default build/fastsim). Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
fastsim=${FASTSIM:-build/fastsim}
[ -n "${FASTSIM:-}" ] || { log=$(mktemp); bash scripts/setup.sh >"$log" 2>&1 || { cat "$log" >&2; exit 1; }; rm -f "$log"; }
out=${1:-$(mktemp -d)}
config=configs/train/mlp.yaml
common=(-p train.workers=8 --policy bfp_m8 --max-work 3000)
run() {  # name, then -p overrides
  local name=$1; shift
  "$fastsim" train "$config" "${common[@]}" "$@" --out "$out/$name" >"$out/$name.log" 2>&1
  local acc time target
  acc=$(awk -F, 'NR > 1 {a = $2} END {print a}' "$out/$name/comparison.csv")
  time=$(awk -F, 'NR > 1 {t = $5} END {print t}' "$out/$name/time.csv")
  target=$(grep -o 'to 85.00% test accuracy [^;]*$' "$out/$name.log" | sed 's/to 85.00% test accuracy //')
  printf '| %s | %s | %.2f%% | %.3f | %s |\n' "$name" "$*" "$(awk -v a="$acc" 'BEGIN {print 100 * a}')" "$time" "$target"
}
echo "| run | overrides | final test accuracy | simulated s (10 epochs) | to 85% test accuracy |"
echo "|---|---|---|---|---|"
run k1_none -p train.workers=1
run none
run dgc -p train.gradient_sync.compression.scheme=dgc -p train.gradient_sync.compression.density=0.001
run topk -p train.gradient_sync.compression.scheme=topk -p train.gradient_sync.compression.density=0.001
run onebit -p train.gradient_sync.compression.scheme=onebit
run onebit_no_ef -p train.gradient_sync.compression.scheme=onebit -p train.gradient_sync.compression.error_feedback=false
run powersgd_r2 -p train.gradient_sync.compression.scheme=powersgd -p train.gradient_sync.compression.rank=2
run terngrad -p train.gradient_sync.compression.scheme=terngrad
run stale4 -p train.gradient_sync.staleness=4
wan=(-p train.network.topology=switch -p train.network.link.bandwidth_gb_per_s=1.25 -p train.network.link.latency_ns=100000000)
run wan_none "${wan[@]}"
run wan_dgc "${wan[@]}" -p train.gradient_sync.compression.scheme=dgc -p train.gradient_sync.compression.density=0.001
run wan_dgc_stale4 "${wan[@]}" -p train.gradient_sync.compression.scheme=dgc -p train.gradient_sync.compression.density=0.001 -p train.gradient_sync.staleness=4
