#!/usr/bin/env bash
# Rewrites golden outputs (tests/golden/<case>/) from the current build, for a change that is
# meant to move the numbers: only the cases given, or every case when none is given. Review
# `git diff tests/golden` and say in the commit why each number moved (docs/testing.md,
# "Golden outputs").
#   bash scripts/refresh_golden.sh [--bin BIN] [CASE...]   (BIN defaults to build/fastsim)
#   bash scripts/refresh_golden.sh cluster                 refresh tests/golden/cluster only
# CASE is one of the cases below (the CTest tests golden.<case>). For compatibility, a first
# argument that is an executable file is taken as BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
all=(quickstart stepped cluster compare training_cost)
bin=build/fastsim
if [[ ${1:-} == --bin ]]; then
  [[ $# -ge 2 ]] || { echo "refresh_golden: --bin needs a path" >&2; exit 2; }
  bin=$2; shift 2
elif [[ $# -ge 1 && -f $1 && -x $1 ]]; then
  bin=$1; shift
fi
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=("${all[@]}")
for c in "${cases[@]}"; do
  if [[ " ${all[*]} " != *" $c "* ]]; then
    echo "refresh_golden: unknown case '$c' (one of: ${all[*]})" >&2
    exit 2
  fi
done
for c in "${cases[@]}"; do
  bash tests/golden/run.sh "$bin" "$c" --refresh
done
git diff --stat -- tests/golden || true
