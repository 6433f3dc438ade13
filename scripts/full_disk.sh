#!/usr/bin/env bash
# Runs fastsim's writing commands into a small tmpfs that fills up, and checks that each one
# fails with exit 2 naming the file, leaves no staging folder behind and keeps an earlier run
# whole (docs/robustness.md, "Full disks"). Needs root (it mounts a tmpfs), so it is a script,
# not a test.
#   sudo bash scripts/full_disk.sh [build/fastsim]
set -euo pipefail

fastsim=$(realpath "${1:-build/fastsim}")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $(id -u) -eq 0 ]] || { echo "full_disk.sh: needs root to mount a tmpfs" >&2; exit 2; }
work=$(mktemp -d /tmp/fastsim-full-disk.XXXXXX)
disk="$work/disk"
mkdir -p "$disk"
cleanup() { umount "$disk" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
cd "$root"

failures=0
mount_kib() { umount "$disk" 2>/dev/null || true; mount -t tmpfs -o "size=${1}k" tmpfs "$disk"; }
# expect_full NAME COMMAND...: exit 2, "No space left on device" named, no .partial-* left.
expect_full() {
    local name=$1
    shift
    local status=0
    "$@" >"$work/out" 2>"$work/err" || status=$?
    local partial
    partial=$(find "$disk" -name '.partial-*' | head -1)
    if [[ $status -eq 2 ]] && grep -q 'No space left on device' "$work/err" && [[ -z $partial ]]; then
        echo "PASS  $name: $(tail -1 "$work/err" | cut -c1-140)"
    else
        echo "FAIL  $name: exit $status, staging left: ${partial:-none}; $(tail -1 "$work/err" | cut -c1-140)"
        failures=$((failures + 1))
    fi
}

# A run that does not fit: nothing left, not even the folder it made.
mount_kib 200
expect_full "run --out, a disk too small" "$fastsim" run configs/quickstart.yaml --out "$disk/r"
if [[ -e $disk/r ]]; then
    echo "FAIL  the folder made for the failed run is still there"
    failures=$((failures + 1))
else
    echo "PASS  the folder made for the failed run is gone"
fi

# A rerun with --force that does not fit: the earlier run stays whole and reportable.
mount_kib 200
"$fastsim" run configs/tests/tiny_node.yaml --out "$disk/r" >/dev/null
before=$(cd "$disk/r" && md5sum -- * | sort)
expect_full "run --out --force over an earlier run" "$fastsim" run configs/quickstart.yaml --out "$disk/r" --force
after=$(cd "$disk/r" && md5sum -- * | sort)
if [[ $before == "$after" ]] && "$fastsim" report "$disk/r" >/dev/null 2>&1; then
    echo "PASS  the earlier run is whole and reports"
else
    echo "FAIL  the earlier run changed or does not report"
    failures=$((failures + 1))
fi

# A training run whose plots do not fit.
mount_kib 40
expect_full "train --out" "$fastsim" train tests/data/train/mlp_slice.yaml --out "$disk/t"

# A sweep that fills the disk: stops at the point it cannot record (which a rerun redoes).
mount_kib 40
cat >"$work/sweep.yaml" <<EOF
sweep:
  name: full
  base: $root/configs/tests/tiny_node.yaml
axes:
  - {key: node.array.rows, values: [4, 8, 16, 32, 64, 128]}
EOF
expect_full "sweep --out" "$fastsim" sweep "$work/sweep.yaml" --out "$disk/s" --jobs 1

# An exploration whose explore.json does not fit.
mount_kib 4
cat >"$work/space.yaml" <<EOF
sweep:
  name: full
  base: $root/configs/tests/tiny_node.yaml
axes:
  - {key: node.array.rows, values: [4, 8]}
explore:
  objectives: [time_ms, energy_uj]
EOF
expect_full "explore --out" "$fastsim" explore "$work/space.yaml" --out "$disk/e"

if [[ $failures -gt 0 ]]; then
    echo "full_disk.sh: $failures check(s) failed" >&2
    exit 1
fi
echo "full_disk.sh: every command failed cleanly on a full disk"
