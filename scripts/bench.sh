#!/usr/bin/env bash
# Runs the BFP library benchmarks (Google Benchmark) on one core; figures go in docs/performance.md.
# Usage: scripts/bench.sh [extra Google Benchmark flags, e.g. --benchmark_filter=gemm]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
taskset -c 0 build/tests/bench/fastsim_bench_bfp --benchmark_repetitions=3 --benchmark_report_aggregates_only=true "$@"
