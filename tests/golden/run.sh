#!/usr/bin/env bash
# Golden-output regressions (docs/testing.md, "Golden outputs"): runs one case's command with
# --out into a scratch folder and compares each of its pinned files, byte for byte, with
# tests/golden/<case>/. Only deterministic outputs are pinned: the memo and stepped node
# models, the planner and the cluster simulation, and a fixed-precision training run's costing
# (its accuracy depends on OpenBLAS kernels, which differ between CPUs). Wall-clock fields
# (planning_s, simulation_s) are dropped before comparing.
#   bash tests/golden/run.sh BIN CASE            compare (exit 1 and a diff on a change)
#   bash tests/golden/run.sh BIN CASE --refresh  rewrite the pinned files (say why in the commit);
#                                                scripts/refresh_golden.sh [CASE...] does this for
#                                                the cases given, or all of them
# Run from the repository root (CTest does), so the paths recorded in outputs are relative.
set -euo pipefail
bin=$1 case=$2 mode=${3:-compare}
here=tests/golden
case "$case" in
  quickstart) args=(run configs/quickstart.yaml); files=(summary.json report.json layers.csv) ;;
  stepped)    args=(run configs/tests/tiny_node.yaml --fidelity stepped); files=(summary.json report.json layers.csv) ;;
  cluster)    args=(run configs/cluster/fast_4node.yaml); files=(summary.json report.json plan.json plan.csv nodes.csv layers.csv) ;;
  compare)    args=(compare configs/cluster/tpu_v2_v3.yaml --simulate); files=(compare.csv) ;;
  training_cost)
    args=(train configs/train/mlp.yaml --policy bfp_m4 -p train.epochs=1 -p data.train_limit=2000)
    files=(cost.csv) ;;
  *) echo "golden: unknown case '$case'" >&2; exit 2 ;;
esac
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$bin" "${args[@]}" --out "$scratch/out" > "$scratch/stdout"
status=0
for f in "${files[@]}"; do
  sed -E '/"(planning_s|simulation_s|fastsim_version|command_line)":/d' "$scratch/out/$f" > "$scratch/$f"
  if [[ $mode == --refresh ]]; then
    mkdir -p "$here/$case"
    cp "$scratch/$f" "$here/$case/$f"
  elif ! diff -u "$here/$case/$f" "$scratch/$f" > "$scratch/diff"; then
    echo "golden $case: $f differs from $here/$case/$f (fastsim ${args[*]}):" >&2
    head -40 "$scratch/diff" >&2
    status=1
  fi
done
[[ $mode == --refresh ]] && echo "golden $case: refreshed ${files[*]}"
exit $status
