#!/usr/bin/env bash
# Work estimates against measured wall time (docs/performance.md, "Work estimates"): each command
# runs once with --log-level info, which logs its estimate; the table gives both and their ratio.
# The estimates decide the work limit (20 s by default) and the progress line, so they need to be
# right within a small factor, not exactly.
#   bash scripts/bench_work.sh            (FASTSIM=/path/to/fastsim to measure another build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${FASTSIM:-build/fastsim}  # FASTSIM: another binary to measure
# GPT-3 6.7B's four tori (configs/pipeline/gpt3_6.7b_64node.yaml) grown to SIDE x SIDE each.
tori() {
  local side=$1 out="" g
  for g in 0 1 2 3; do
    out+=" -p cluster.groups.$g.count=$((side * side)) -p cluster.groups.$g.torus.rows=$side -p cluster.groups.$g.torus.cols=$side"
  done
  echo "$out -p workload.batch=$((4 * side * side))"
}
gpt67=configs/pipeline/gpt3_6.7b_64node.yaml
cmds=(
  "run configs/quickstart.yaml"
  "run configs/bench/resnet50_b256.yaml"
  "run configs/bench/resnet50_gemm_b256.yaml"
  "run configs/quickstart.yaml --fidelity stepped -p workload.batch=1"
  "run configs/quickstart.yaml --trace /tmp/fastsim-bench-work.json"
  "plan configs/bench/resnet152_1024.yaml"
  "plan configs/cluster/fast_4node.yaml -p cluster.groups.0.count=4096 -p workload.batch=4096"
  "run configs/cluster/fast_16node.yaml"
  "run configs/cluster/fast_4node.yaml -p cluster.groups.0.count=1024 -p workload.batch=1024"
  "compare configs/cluster/tpu_v2_v3.yaml --simulate"
  "run $gpt67"
  "plan $gpt67 $(tori 8)"
  "run $gpt67 $(tori 8)"
  "plan $gpt67 $(tori 8) -p planner.name=pipeline -p planner.pipeline.stages=8 -p planner.pipeline.microbatches=32"
  "run $gpt67 $(tori 8) -p planner.name=pipeline -p planner.pipeline.stages=8 -p planner.pipeline.microbatches=32"
  "plan $gpt67 $(tori 16)"
  "run $gpt67 $(tori 16)"
  "plan configs/pipeline/gpt3_175b_1024node.yaml"
  "run configs/pipeline/gpt3_175b_1024node.yaml"
  "plan $gpt67 $(tori 16) -p planner.name=pipeline -p planner.pipeline.stages=16 -p planner.pipeline.microbatches=64"
  "run $gpt67 $(tori 16) -p planner.name=pipeline -p planner.pipeline.stages=16 -p planner.pipeline.microbatches=64"
  "train configs/train/mlp.yaml --policy fast -p train.epochs=1"
  "train configs/train/mlp.yaml --policy fp32 -p train.epochs=1"
  "train configs/train/cnn.yaml --policy fast -p train.epochs=1 -p data.train_limit=10000"
)
printf '%-95s %12s %10s %7s\n' command estimated_s measured_s ratio
for c in "${cmds[@]}"; do
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  est=$($bin $c --log-level info --max-work 100000 2>&1 >/dev/null | sed -n 's/.*work: .*: estimated \([0-9.]*\) s:.*/\1/p' | head -1)
  end=$(date +%s.%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  # The tori's overrides shortened to what they make.
  label=$(echo "$c" | sed -E 's/( -p cluster\.groups\.[0-9]\.[a-z.]+=[0-9]+)+/ [4 tori]/')
  printf '%-95s %12s %10s %7s\n' "$label" "${est:-?}" "$wall" "$(awk -v e="${est:-0}" -v w="$wall" 'BEGIN { if (w > 0) printf "%.2f", e / w; else print "-" }')"
done
