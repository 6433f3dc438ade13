#!/usr/bin/env bash
# Wall time (hyperfine) and peak memory (GNU time) of the planner and the cluster run, on one
# core. Figures go in docs/performance.md. Usage: scripts/bench_cluster.sh
#   planner: fastsim plan configs/bench/resnet152_1024.yaml  (ResNet-152 over 1024 nodes)
#   cluster: fastsim run  configs/cluster/tpu_v2_v3.yaml     (ResNet-50 b256, 16 heterogeneous nodes)
#   pipeline: fastsim plan|run configs/pipeline/gpt3_6.7b_64node.yaml (alpa, GPT-3 6.7B, 64 nodes)
#   given plan: fastsim run CFG --plan plan.json for the last two (the plan written by fastsim plan)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
command -v hyperfine >/dev/null || { echo "bench_cluster.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_cluster.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
plans=$(mktemp -d)
trap 'rm -rf "$plans"' EXIT
build/fastsim plan configs/cluster/tpu_v2_v3.yaml --out "$plans/tpu" --force >/dev/null
build/fastsim plan configs/pipeline/gpt3_6.7b_64node.yaml --out "$plans/gpt3" --force >/dev/null
for command in "plan configs/bench/resnet152_1024.yaml --max-work 600" "run configs/cluster/tpu_v2_v3.yaml" \
               "run configs/cluster/tpu_v2_v3.yaml --plan $plans/tpu/plan.json" \
               "plan configs/pipeline/gpt3_6.7b_64node.yaml" "run configs/pipeline/gpt3_6.7b_64node.yaml" \
               "run configs/pipeline/gpt3_6.7b_64node.yaml --plan $plans/gpt3/plan.json"; do
  hyperfine --warmup 1 --runs 5 -N "taskset -c 0 build/fastsim $command"
  /usr/bin/time -f "fastsim $command: peak RSS %M KiB, %e s wall" taskset -c 0 build/fastsim $command >/dev/null
done
