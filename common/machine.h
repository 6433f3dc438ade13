// SPDX-License-Identifier: MIT
#pragma once

namespace fastsim {

/// CPUs in this process's affinity mask (taskset, cgroup cpusets), at least 1.
int usable_cores();

}  // namespace fastsim
