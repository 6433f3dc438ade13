#!/usr/bin/env bash
# Accuracy and simulated time of data-parallel training with each gradient-sync scheme
# (docs/compression.md, "In training"): K = 8 workers under bfp_m8, the MLP for its config's
# 10 epochs, or the CNN.
#   bash scripts/compression_training.sh [OUT_DIR]                 (MLP: about 4 minutes on one core)
#   MODEL=cnn EPOCHS=5 ONLY="none dgc ..." bash scripts/compression_training.sh [OUT_DIR]
# FASTSIM=path overrides the binary (default build/fastsim); EPOCHS overrides train.epochs
# (DGC's warm-up takes 4 epochs); ONLY lists the runs to do (default: all).
# Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
fastsim=${FASTSIM:-build/fastsim}
[ -n "${FASTSIM:-}" ] || { log=$(mktemp); bash scripts/setup.sh >"$log" 2>&1 || { cat "$log" >&2; exit 1; }; rm -f "$log"; }
out=${1:-$(mktemp -d)}
model=${MODEL:-mlp}
case $model in mlp|cnn) ;; *) echo "MODEL must be mlp or cnn, not '$model'" >&2; exit 2 ;; esac
config=configs/train/$model.yaml
epochs=${EPOCHS:-$(awk '$1 == "epochs:" {print $2; exit}' "$config")}
common=(-p train.workers=8 -p train.epochs="$epochs" --policy bfp_m8 --max-work 3000)
run() {  # name, then -p overrides
  local name=$1; shift
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
  local acc time target
  if ! "$fastsim" train "$config" "${common[@]}" "$@" --out "$out/$name" --force >"$out/$name.log" 2>&1; then
    printf '| %s | %s | %s | | |\n' "$name" "$*" "$(grep -o 'diverged.*iteration [0-9]*' "$out/$name.log" || echo failed)"
    return
  fi
  acc=$(awk -F, 'NR > 1 {a = $2} END {print a}' "$out/$name/comparison.csv")
  time=n/a target=n/a  # one worker without compression is single-process training: no exchange to time
  if [ -f "$out/$name/time.csv" ]; then
    time=$(awk -F, 'NR > 1 {t = $5} END {printf "%.3f", t}' "$out/$name/time.csv")
    target=$(grep -o 'to 85.00% test accuracy .*$' "$out/$name.log" | sed 's/to 85.00% test accuracy //')
  fi
  printf '| %s | %s | %.2f%% | %s | %s |\n' "$name" "$*" "$(awk -v a="$acc" 'BEGIN {print 100 * a}')" "$time" "$target"
}
echo "| run | overrides | final test accuracy | simulated s ($epochs epochs) | to 85% test accuracy |"
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
slow=(-p train.learning_rate=0.01 -p train.momentum=0.5)  # delayed SGD needs a smaller step
run none_slow "${slow[@]}"
run stale4_slow "${slow[@]}" -p train.gradient_sync.staleness=4
wan=(-p train.network.topology=switch -p train.network.link.bandwidth_gb_per_s=1.25 -p train.network.link.latency_ns=100000000)
run wan_none "${wan[@]}"
run wan_dgc "${wan[@]}" -p train.gradient_sync.compression.scheme=dgc -p train.gradient_sync.compression.density=0.001
run wan_dgc_stale4 "${wan[@]}" -p train.gradient_sync.compression.scheme=dgc -p train.gradient_sync.compression.density=0.001 -p train.gradient_sync.staleness=4
run wan_dgc_stale8 "${wan[@]}" -p train.gradient_sync.compression.scheme=dgc -p train.gradient_sync.compression.density=0.001 -p train.gradient_sync.staleness=8
run wan_onebit "${wan[@]}" -p train.gradient_sync.compression.scheme=onebit
