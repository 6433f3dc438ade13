// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>

#include "common/checked.h"
#include "config/load.h"
#include "config/params.h"

namespace fastsim::run {

/// `work()` (and what it returns), with a SizeOverflow from the models turned into
/// config::layer_size_error for layer `layer` of params.workload (located at the layer, naming
/// workload.batch).
template <typename Work>
auto with_layer_named(const config::Params& params, std::size_t layer, Work&& work) -> decltype(work()) {
    try {
        return work();
    } catch (const SizeOverflow& overflow) {
        throw config::layer_size_error(params.workload.network.layers.at(layer), params.workload.batch,
                                       params.workload.batch_where, overflow);
    }
}

}  // namespace fastsim::run
