#!/usr/bin/env bash
# Installs the Debian packages fastsim needs (only those missing) and builds it in build/.
# Idempotent: with everything present it only runs an incremental build.
# FASTSIM_WITH_MPI=ON also installs Open MPI and builds `fastsim sweep --mpi` (docs/sweeps.md).
# FASTSIM_FUZZ=ON also installs Clang and libFuzzer, for scripts/sanitize.sh and scripts/fuzz.sh
# (docs/robustness.md); the build in build/ is the same either way.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build pkg-config
          libsystemc-dev libboost-program-options-dev libyaml-cpp-dev catch2 libspdlog-dev libbenchmark-dev
          zlib1g-dev libopenblas-dev dataset-fashion-mnist libonnx-dev libprotobuf-dev libgoogle-perftools-dev)
cmake_args=()
if [[ ${FASTSIM_WITH_MPI:-OFF} == ON ]]; then
  packages+=(openmpi-bin libopenmpi-dev)
  cmake_args+=(-DFASTSIM_WITH_MPI=ON)
fi
if [[ ${FASTSIM_FUZZ:-OFF} == ON ]]; then
  packages+=(clang libfuzzer-14-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if [[ ! -f build/build.ninja || ${#cmake_args[@]} -gt 0 ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" >&2
fi
cmake --build build >&2
