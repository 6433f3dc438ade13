#!/usr/bin/env bash
# Wall time (hyperfine) and peak memory (GNU time) of node training-step runs, on one core.
# Figures go in docs/performance.md. Usage: scripts/bench_node.sh [CONFIG ...]
# (default: configs/bench/resnet50_b256.yaml, the whole ResNet-50 batch-256 step on a 32x32 node).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
command -v hyperfine >/dev/null || { echo "bench_node.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_node.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(configs/bench/resnet50_b256.yaml)
for config in "${configs[@]}"; do
  hyperfine --warmup 2 --runs 10 -N "taskset -c 0 build/fastsim run $config"
  /usr/bin/time -f "$config: peak RSS %M KiB, %e s wall" taskset -c 0 build/fastsim run "$config" >/dev/null
done
