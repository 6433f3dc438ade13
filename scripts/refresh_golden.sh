#!/usr/bin/env bash
# Rewrites every golden output (tests/golden/<case>/) from the current build, for a change that
# is meant to move the numbers. Review `git diff tests/golden` and say in the commit why each
# number moved. docs/architecture.md, "Tests".
#   bash scripts/refresh_golden.sh [BIN]     (default build/fastsim)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/fastsim}
for c in quickstart stepped cluster compare training_cost; do
  bash tests/golden/run.sh "$bin" "$c" --refresh
done
git diff --stat -- tests/golden || true
