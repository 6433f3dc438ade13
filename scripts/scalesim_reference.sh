#!/usr/bin/env bash
# Regenerates SCALE-Sim v2's own outputs for `fastsim scalesim`'s reference cases.
#
#   bash scripts/scalesim_reference.sh SCALESIM_SRC [OUT_DIR]      (default OUT_DIR tests/data/scalesim)
#   CASES="conv_ws_8x8 gemm_os_32x32" bash scripts/scalesim_reference.sh SCALESIM_SRC   (a subset)
#
# SCALESIM_SRC is an extracted SCALE-Sim v2 tree (the reference is commit 22f88b1 of
# https://github.com/scalesim-project/scale-sim-v2); it needs Debian's python3-numpy, python3-tqdm
# and python3-pandas. For each case below this writes the inputs (arch.cfg, topology.csv and
# `args`, the -i form) into OUT_DIR/<case>/, runs
#   cd SCALESIM_SRC && PYTHONPATH=. /usr/bin/python3 scalesim/scale.py -c arch.cfg -t topology.csv -p LOGDIR -i FORM
# once, and copies the three reports it writes (LOGDIR/<run_name>/COMPUTE_REPORT.csv,
# BANDWIDTH_REPORT.csv, DETAILED_ACCESS_REPORT.csv) byte for byte next to them, with
# `wall_seconds`: the whole SCALE-Sim process's wall time on the machine that ran this.
# The case inputs live in this script (heredocs and write_cfg below), so the script rebuilds
# every file from nothing. Cases run one at a time.
#
# This is a maintainer's tool, not a test dependency: the tests only read the committed files,
# and nothing in the build or the test suite runs SCALE-Sim or Python.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 SCALESIM_SRC [OUT_DIR]" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
[[ -f "$src/scalesim/scale.py" ]] || { echo "$src: no scalesim/scale.py" >&2; exit 2; }
if [[ $# -ge 2 ]]; then
  mkdir -p "$2"
  out=$(cd "$2" && pwd)
else
  out=$(cd "$(dirname "$0")/.." && pwd)/tests/data/scalesim
fi
py=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# write_cfg FILE RUN_NAME HEIGHT WIDTH IFMAP_KB FILTER_KB OFMAP_KB DATAFLOW MODE BANDWIDTH
# SCALE-Sim's configs/scale.cfg layout; MemoryBanks is there as in scale.cfg (SCALE-Sim ignores it).
write_cfg() {
  cat > "$1" <<EOF
[general]
run_name = $2

[architecture_presets]
ArrayHeight:    $3
ArrayWidth:     $4
IfmapSramSzkB:    $5
FilterSramSzkB:   $6
OfmapSramSzkB:    $7
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Dataflow : $8
Bandwidth : ${10}
MemoryBanks: 1

[run_presets]
InterfaceBandwidth: $9
EOF
}

# The conv topology, in SCALE-Sim's own CSV form (header row skipped, text after the last comma
# dropped). Conv_fold folds rows and cols with partial last folds on 8x8 in every dataflow;
# Conv_1x1 is a 1x1 conv; Conv_s2 has stride 2 and an ofmap edge that runs past the ifmap
# (ceil((10-3+2)/2) = 5); Conv_small fits inside an 8x8 array in every dataflow; Conv_rect has a
# non-square ifmap and filter and a 9th field (row stride 1, col stride 2); DP_conv has DP in its
# name, so SCALE-Sim runs it as 3 layers of one channel each.
write_conv_topology() {
  cat > "$1" <<'EOF'
Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,
Conv_fold, 16, 16, 3, 3, 3, 12, 1,
Conv_1x1, 7, 7, 1, 1, 16, 10, 1,
Conv_s2, 10, 10, 3, 3, 4, 8, 2,
Conv_small, 3, 4, 2, 2, 1, 5, 1,
Conv_rect, 12, 7, 3, 1, 2, 6, 1, 2,
DP_conv, 8, 8, 3, 3, 3, 1, 1,
EOF
}

# The GEMM topology (SCALE-Sim's `Layer, M, N, K,` form). On 32x32: small fits the array in
# every dataflow, partial folds partially in both directions, exact folds exactly, gemv has M = 1.
write_gemm_topology() {
  cat > "$1" <<'EOF'
Layer, M, N, K,
small, 20, 16, 24,
partial, 100, 40, 70,
exact, 64, 64, 64,
gemv, 1, 50, 33,
EOF
}

# AlexNet's first two conv layers, as SCALE-Sim ships them.
write_alexnet2_topology() {
  head -n 3 "$src/topologies/conv_nets/alexnet.csv" > "$1"
}

# case NAME FORM TOPOLOGY_WRITER HEIGHT WIDTH IFMAP_KB FILTER_KB OFMAP_KB DATAFLOW MODE BANDWIDTH
cases=()
case_args=()
add_case() {
  cases+=("$1")
  case_args+=("$*")
}
for df in ws os is; do
  add_case "conv_${df}_8x8" conv write_conv_topology 8 8 1 2 1 "$df" CALC 10
  add_case "conv_${df}_16x4" conv write_conv_topology 16 4 16 8 4 "$df" CALC 10
  add_case "gemm_${df}_32x32" gemm write_gemm_topology 32 32 32 32 16 "$df" CALC 10
done
add_case conv_ws_8x8_user_bw10 conv write_conv_topology 8 8 1 2 1 ws USER 10
add_case conv_ws_8x8_user_bw2 conv write_conv_topology 8 8 1 2 1 ws USER 2
add_case conv_os_8x8_user_bw4 conv write_conv_topology 8 8 1 2 1 os USER 4
add_case conv_is_8x8_user_bw4 conv write_conv_topology 8 8 1 2 1 is USER 4
add_case gemm_ws_32x32_user_bw8 gemm write_gemm_topology 32 32 4 4 2 ws USER 8
add_case gemm_os_16x4_user_bw3 gemm write_gemm_topology 16 4 2 2 1 os USER 3
add_case gemm_is_32x32_user_bw5 gemm write_gemm_topology 32 32 2 4 1 is USER 5
add_case alexnet2_ws_32x32 conv write_alexnet2_topology 32 32 64 64 64 ws CALC 10

run_case() {
  local name=$1 form=$2 writer=$3 h=$4 w=$5 ifkb=$6 fkb=$7 okb=$8 df=$9 mode=${10} bw=${11}
  local dir=$out/$name logdir=$work/$name
  mkdir -p "$dir"
  rm -f "$dir"/*.csv "$dir/wall_seconds"
  write_cfg "$dir/arch.cfg" "$name" "$h" "$w" "$ifkb" "$fkb" "$okb" "$df" "$mode" "$bw"
  "$writer" "$dir/topology.csv"
  echo "$form" > "$dir/args"

  echo "== $name" >&2
  local t0 t1 rc=0
  t0=$(date +%s%N)
  (cd "$src" && PYTHONPATH=. "$py" scalesim/scale.py -c "$dir/arch.cfg" -t "$dir/topology.csv" \
     -p "$logdir" -i "$form") > "$work/$name.log" 2>&1 || rc=$?
  t1=$(date +%s%N)
  local run=$logdir/$name
  if [[ $rc -ne 0 || ! -f "$run/DETAILED_ACCESS_REPORT.csv" ]]; then
    tail -n 30 "$work/$name.log" >&2
    echo "$name: SCALE-Sim failed (exit $rc)" >&2
    return 1
  fi
  local f
  for f in COMPUTE_REPORT.csv BANDWIDTH_REPORT.csv DETAILED_ACCESS_REPORT.csv; do
    cp "$run/$f" "$dir/$f"
  done
  # SCALE-Sim writes only these three files (scale.py runs it with save_disk_space=True: no traces).
  for f in "$run"/* "$run"/.[!.]*; do
    [[ -e "$f" ]] || continue
    case ${f##*/} in
      COMPUTE_REPORT.csv | BANDWIDTH_REPORT.csv | DETAILED_ACCESS_REPORT.csv) ;;
      *) echo "$name: SCALE-Sim also wrote ${f##*/}" >&2 ;;
    esac
  done
  awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f\n", ns / 1e9 }' > "$dir/wall_seconds"
  echo "   $(cat "$dir/wall_seconds") s" >&2
}

selected=${CASES:-}
for i in "${!cases[@]}"; do
  name=${cases[$i]}
  if [[ -n "$selected" && " $selected " != *" $name "* ]]; then
    continue
  fi
  # shellcheck disable=SC2086  # the stored arguments are single words
  run_case ${case_args[$i]}
done
