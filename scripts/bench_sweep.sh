#!/usr/bin/env bash
# Sweep runner cost (hyperfine). Figures go in docs/performance.md. Usage: scripts/bench_sweep.sh
#   overhead: 40 points of ~1 ms simulation each, --jobs 1: wall / 40 = per-point overhead
#   one point: the same point as a plain `fastsim run --out` (what the sweep adds on top of it)
#   scaling: 40 ResNet-50 points, --jobs 1 vs --jobs 2 (needs 2 free cores)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
command -v hyperfine >/dev/null || { echo "bench_sweep.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
hyperfine --warmup 1 --runs 10 --prepare "rm -rf $out/o" -N "build/fastsim sweep configs/bench/sweep_overhead.yaml --out $out/o --jobs 1"
hyperfine --warmup 3 --runs 40 -N "build/fastsim run configs/tests/tiny_node.yaml --out $out/one --force"
for jobs in 1 2; do
  hyperfine --warmup 1 --runs 5 --prepare "rm -rf $out/s$jobs" -N "build/fastsim sweep configs/bench/sweep40_resnet50.yaml --out $out/s$jobs --jobs $jobs"
done
