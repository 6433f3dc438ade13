#!/usr/bin/env bash
# fastsim sweep --mpi under mpirun with 2 and 3 ranks writes the same results.csv as the local
# runner, and a rerun under MPI resumes (runs nothing). Usage: mpi_sweep.sh FASTSIM SOURCE_DIR
set -euo pipefail
fastsim=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/s.yaml" <<YAML
sweep: {name: mpi_check, base: $source_dir/configs/tests/tiny_node.yaml}
axes:
  - {key: node.array.rows, values: [2, 3, 4, 5, 6]}
  - {key: precision.weights, values: [2, 8]}
YAML
mpi=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
"$fastsim" sweep "$work/s.yaml" --out "$work/local" --jobs 2 >/dev/null 2>&1
for ranks in 2 3; do
  "${mpi[@]}" -n $ranks "$fastsim" sweep "$work/s.yaml" --out "$work/mpi$ranks" --mpi >"$work/out$ranks" 2>"$work/err$ranks" ||
    { echo "FAIL: mpirun -n $ranks exited $?"; cat "$work/err$ranks"; exit 1; }
  grep -q "10 ok, 0 failed" "$work/out$ranks" || { echo "FAIL: -n $ranks:"; cat "$work/out$ranks" "$work/err$ranks"; exit 1; }
  cmp "$work/local/results.csv" "$work/mpi$ranks/results.csv" || { echo "FAIL: -n $ranks results.csv differs"; exit 1; }
done
"${mpi[@]}" -n 2 "$fastsim" sweep "$work/s.yaml" --out "$work/mpi2" --mpi >/dev/null 2>"$work/again"
grep -q "10 already done, 0 failed before (not retried), 0 to run" "$work/again" || { echo "FAIL: MPI rerun did not resume"; cat "$work/again"; exit 1; }
echo "ok: mpirun -n 2 and -n 3 give the local results.csv; a rerun resumes"
