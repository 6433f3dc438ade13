// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include "common/errors.h"
#include "energy/energy.h"

namespace fastsim::config {

/// Reads an energy table (docs/energy.md): `path`, or the built-in
/// configs/energy/fast_45nm.yaml when `path` is empty. `dram_type` picks the DRAM entry;
/// `dram_type_where` locates it in the run config for the error if the table lacks it. Its SRAM
/// energies are those of banks of `exponent_kib` and `mantissa_kib` (energy::for_banks).
/// Every entry must be present and non-negative; ConfigError names the file and key.
energy::EnergyTable load_energy_table(const std::string& path, const std::string& dram_type,
                                      const Location& dram_type_where, double exponent_kib, double mantissa_kib);

}  // namespace fastsim::config
