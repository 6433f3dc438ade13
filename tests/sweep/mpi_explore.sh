#!/usr/bin/env bash
# fastsim explore --mpi under mpirun with 2 and 3 ranks writes the same designs.csv and
# pareto.csv as a local run, and a rerun under MPI evaluates nothing. Usage:
# mpi_explore.sh FASTSIM SOURCE_DIR
set -euo pipefail
fastsim=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/e.yaml" <<YAML
sweep: {name: mpi_explore, base: $source_dir/configs/tests/tiny_node.yaml}
axes:
  - {key: node.array.rows, values: [2, 3, 4, 5, 6]}
  - {key: node.array.cols, values: [2, 4, 6]}
  - {key: precision.weights, values: [2, 8]}
explore:
  objectives: [time_ms, energy_uj, area_mm2]
YAML
mpi=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
"$fastsim" explore "$work/e.yaml" --out "$work/local" --jobs 1 >/dev/null 2>&1
for ranks in 2 3; do
  "${mpi[@]}" -n $ranks "$fastsim" explore "$work/e.yaml" --out "$work/mpi$ranks" --mpi >"$work/out$ranks" 2>"$work/err$ranks" ||
    { echo "FAIL: mpirun -n $ranks exited $?"; cat "$work/err$ranks"; exit 1; }
  grep -q "30 designs evaluated (30 now)" "$work/out$ranks" || { echo "FAIL: -n $ranks:"; cat "$work/out$ranks" "$work/err$ranks"; exit 1; }
  grep -q "$((ranks - 1)) at a time on the MPI ranks" "$work/err$ranks" || { echo "FAIL: -n $ranks: not on the ranks"; cat "$work/err$ranks"; exit 1; }
  for f in designs.csv pareto.csv; do
    cmp "$work/local/$f" "$work/mpi$ranks/$f" || { echo "FAIL: -n $ranks $f differs"; exit 1; }
  done
done
"${mpi[@]}" -n 2 "$fastsim" explore "$work/e.yaml" --out "$work/mpi2" --mpi >"$work/again" 2>&1
grep -q "30 designs evaluated (0 now)" "$work/again" || { echo "FAIL: MPI rerun did not resume"; cat "$work/again"; exit 1; }
# A refusal on rank 0 (another exploration in --out) releases the workers: the job ends, exit 2.
if timeout 120 "${mpi[@]}" -n 2 "$fastsim" explore "$work/e.yaml" --out "$work/other" --mpi --merge "$work/nowhere" \
  >/dev/null 2>"$work/refused"; then
  echo "FAIL: a refused merge exited 0"; exit 1
fi
grep -q "not a directory" "$work/refused" || { echo "FAIL: refusal not reported"; cat "$work/refused"; exit 1; }
echo "ok: mpirun -n 2 and -n 3 give the local designs.csv and pareto.csv; a rerun resumes; a refusal ends the job"
