#!/usr/bin/env bash
# Runs each libFuzzer harness (tests/fuzz) for SECONDS, seeded with the shipped files and
# tests/fuzz/corpus/<name>; fails on any crash, sanitizer finding, leak or slow input
# (docs/robustness.md). Builds the harnesses in build-san/ (scripts/sanitize.sh) first.
#   bash scripts/fuzz.sh [SECONDS] [NAME ...]     (default 15 s each, every harness)
# A finding is written to build-san/fuzz-artifacts/; keep it as a regression test by copying it
# into tests/fuzz/corpus/<name>/ once fixed (CTest fuzz_regressions.<name> replays that folder).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
shift || true
names=("$@")
((${#names[@]})) || names=(config trace scalesim_csv scalesim_cfg results_csv json sweep_file idx plan_file onnx)

FASTSIM_FUZZ=ON bash scripts/setup.sh
if [[ ! -f build-san/build.ninja ]]; then
  cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DFASTSIM_ENABLE_ASAN=ON -DFASTSIM_BUILD_FUZZERS=ON -DFASTSIM_BUILD_BENCHMARKS=OFF >&2
fi
targets=()
for n in "${names[@]}"; do targets+=("fuzz_$n"); done
cmake --build build-san --target "${targets[@]}" >&2

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p build-san/fuzz-artifacts
seeds_of() {  # the shipped files each harness starts from (as tests/fuzz/CMakeLists.txt)
  case $1 in
    config) echo configs ;;
    trace) echo traces ;;
    sweep_file) echo "configs/sweeps tests/data/sweeps" ;;
    json | results_csv) echo tests/data/sweeps ;;
    onnx) echo "tests/data/onnx tests/bad_inputs/files/onnx" ;;
    plan_file) echo tests/bad_inputs/files/plans ;;
  esac
}
status=0
for n in "${names[@]}"; do
  work="build-san/fuzz-corpus/$n"
  mkdir -p "$work"
  # shellcheck disable=SC2046
  if build-san/fuzz/fuzz_"$n" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="build-san/fuzz-artifacts/$n-" "$work" "tests/fuzz/corpus/$n" $(seeds_of "$n") \
       >"build-san/fuzz-$n.log" 2>&1; then
    echo "fuzz $n: ${seconds} s, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "build-san/fuzz-$n.log" | grep -o '[0-9]*$') inputs, nothing found"
  else
    status=1
    echo "fuzz $n: FOUND a problem (build-san/fuzz-$n.log, artifacts in build-san/fuzz-artifacts/):"
    grep -m5 -E "ERROR|runtime error|terminate|Assertion|SUMMARY" "build-san/fuzz-$n.log" || tail -5 "build-san/fuzz-$n.log"
  fi
done
exit $status
