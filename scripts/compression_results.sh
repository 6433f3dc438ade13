#!/usr/bin/env bash
# Step time and gradient-sync bytes of every compression scheme on every network config
# (configs/network/*.yaml), with and without a delayed update: the table in docs/compression.md.
#   bash scripts/compression_results.sh [STALENESS]   (default 0)
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
bash scripts/setup.sh >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
rm -f "$log"
staleness=${1:-0}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| config | scheme | simulated step ms | planned ms | sync MB on the wire | uncompressed MB | exposed sync ms |"
echo "|---|---|---|---|---|---|---|"
for config in configs/network/*.yaml; do
  for scheme in none topk dgc threshold powersgd onebit terngrad; do
    build/fastsim run "$config" -p cluster.gradient_sync.compression.scheme=$scheme \
      -p cluster.gradient_sync.staleness="$staleness" --out "$out" --force >/dev/null
    awk -v c="$(basename "$config")" -v s="$scheme" -F': ' '
      /"simulated_step_s"/ {gsub(/,/, "", $2); step = $2}
      /"planned_step_s"/ {gsub(/,/, "", $2); planned = $2}
      /"sync_bytes"/ {gsub(/,/, "", $2); wire = $2}
      /"sync_bytes_uncompressed"/ {gsub(/,/, "", $2); plain = $2}
      /"exposed_sync_s"/ {gsub(/,/, "", $2); exposed = $2}
      END {printf "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", c, s, step * 1e3, planned * 1e3, wire / 1e6, plain / 1e6, exposed * 1e3}' \
      "$out/report.json"
  done
done
