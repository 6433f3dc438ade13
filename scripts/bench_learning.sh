#!/usr/bin/env bash
# BFP training speed (docs/performance.md, "BFP training"): the fast-path GEMM against plain
# OpenBLAS SGEMM on the MLP's shapes, one MLP epoch under the FAST policy, and one CNN epoch
# under bfp_m8 and FP32, on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build --target fastsim fastsim_bench_learning >&2
taskset -c 0 build/tests/bench/fastsim_bench_learning --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
# The whole process: start, reading the 60,000 + 10,000 images (about 0.4 s), one epoch of
# 938 iterations with the node costing, the test-set evaluation.
hyperfine -N -w 1 -r 5 \
  "taskset -c 0 build/fastsim train configs/train/mlp.yaml --policy fast -p train.epochs=1" \
  "taskset -c 0 build/fastsim train configs/train/mlp.yaml --policy fp32 -p train.epochs=1"
# One CNN epoch (--max-work: the estimate may exceed the default 20 s limit). The epoch's own
# time, without start-up and data loading, is the "(N s)" on its progress line.
hyperfine -N -w 1 -r 3 \
  "taskset -c 0 build/fastsim train configs/train/cnn.yaml --policy bfp_m8 -p train.epochs=1 --max-work 3000" \
  "taskset -c 0 build/fastsim train configs/train/cnn.yaml --policy fp32 -p train.epochs=1 --max-work 3000"
