#!/usr/bin/env bash
# The planner comparison tables of docs/planner.md, "Results": every planner on the five shipped
# CNN traces, on the heterogeneous and the homogeneous 16-node clusters (predicted, simulated,
# volume), and at AccPar's code setting (128 nodes, batch 512, volume) on the shipped traces and
# on AccPar's own layer shapes (traces/accpar). Notes (what --equal-split means) are left out.
#   bash scripts/planner_results.sh
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
bash scripts/setup.sh >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
rm -f "$log"
traces=()
for t in alexnet vgg11 vgg16 resnet18 resnet50; do traces+=(--trace "traces/$t.yaml"); done
accpar_traces=()
for t in alexnet vgg11 resnet18 resnet34 resnet50; do accpar_traces+=(--trace "traces/accpar/$t.yaml"); done
at_128=(-p cluster.groups.0.count=128 -p cluster.groups.0.torus.rows=8 -p cluster.groups.0.torus.cols=16 -p workload.batch=512)
compare() {
  echo "\$ build/fastsim compare $*"
  build/fastsim compare "$@" | grep -v '^note: '
  echo
}
compare configs/cluster/tpu_v2_v3.yaml "${traces[@]}"
compare configs/cluster/tpu_v2_v3.yaml "${traces[@]}" --simulate
compare configs/cluster/tpu_v2_v3.yaml "${traces[@]}" --comm-only --equal-split
compare configs/cluster/fast_16node.yaml "${traces[@]}"
compare configs/cluster/fast_16node.yaml "${traces[@]}" --simulate
compare configs/cluster/fast_16node.yaml "${traces[@]}" --comm-only --equal-split "${at_128[@]}"
compare configs/cluster/fast_16node.yaml "${accpar_traces[@]}" --comm-only --equal-split "${at_128[@]}" --out "${1:-/tmp/fastsim-accpar-shapes}" --force
