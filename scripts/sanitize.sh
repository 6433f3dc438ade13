#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer, built with Clang in
# build-san/ together with the libFuzzer harnesses (docs/robustness.md). Any sanitizer finding
# aborts its test (-fno-sanitize-recover). Installs Clang and libFuzzer when missing.
#   bash scripts/sanitize.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
FASTSIM_FUZZ=ON bash scripts/setup.sh
if [[ ! -f build-san/build.ninja ]]; then
  cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DFASTSIM_ENABLE_ASAN=ON -DFASTSIM_BUILD_FUZZERS=ON -DFASTSIM_BUILD_BENCHMARKS=OFF >&2
fi
cmake --build build-san >&2
# Leaks are findings too; SystemC's kernel keeps its objects to exit by design, so its
# allocations are suppressed (tests/fuzz/lsan.supp).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
# use_stacks=0: SystemC 2.3.4 tells ASan when it switches to a coroutine's stack; once a test has
# deleted its sc_simcontext (tests/support/systemc_fixture.h, run_cluster_step_in_fresh_kernel),
# the main thread's recorded stack can still be a freed coroutine stack, and LeakSanitizer's
# tracer dies reading it at exit ("Tracer caught signal 11"). Thread stacks then hold no roots:
# a block reachable only from a stack at exit would be reported, never one hidden.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0:use_stacks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The random-cluster sample (tests/random_clusters, about 4 minutes under ASan) runs the code
# paths the shipped-config cluster tests already run here; it runs in the plain suite only.
ctest --test-dir build-san --output-on-failure -j2 -LE chromium -E "^unit\.random clusters: " "$@"
