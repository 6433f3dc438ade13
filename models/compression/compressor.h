// SPDX-License-Identifier: MIT
#pragma once

// One gradient compression scheme (docs/compression.md), everything it defines in one place:
// what it puts on the wire (the cluster's gradient synchronisation lowers these volumes to
// messages), the work it does on a node (the node model costs it), and what it does to real
// gradients (`fastsim train`'s workers). Each scheme is one file under models/compression/impl/
// and one row of the descriptor table in compression.cpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "compression/compression.h"

namespace fastsim::compression {

/// One replica set's gradient as the exchange sees it.
struct Gradient {
    std::uint64_t values = 0;       ///< gradient values
    std::uint64_t bytes = 0;        ///< uncompressed: values x the weight-gradient width
    std::uint64_t factor_rows = 0;  ///< Σ n over its n x m matrix blocks (PowerSGD's P has n x r)
    std::uint64_t factor_cols = 0;  ///< Σ m (PowerSGD's Q has m x r)
    /// Bytes of one uncompressed value (0 for an empty gradient).
    [[nodiscard]] std::uint64_t value_bytes() const { return values > 0 ? bytes / values : 0; }
};

/// One collective a scheme puts on the wire when its ranks exchange without a server.
struct WireCollective {
    enum class Op : std::uint8_t {
        all_reduce,  ///< `bytes`: each rank's buffer, summed over the ranks
        all_gather,  ///< `bytes`: each rank's contribution; every rank ends with all of them
    };
    Op op = Op::all_reduce;
    std::uint64_t bytes = 0;
};

/// A parameter tensor as a matrix: rows x cols values (PowerSGD factors it; a vector is
/// rows x 1 and is sent uncompressed by PowerSGD, as its authors do).
struct TensorShape {
    std::size_t rows = 0, cols = 1;
    [[nodiscard]] std::size_t size() const { return rows * cols; }
};

/// What a scheme keeps for one tensor across iterations.
struct TensorState {
    std::vector<std::vector<float>> residual;  ///< [worker]: error feedback (DGC: the accumulated velocity v)
    std::vector<std::vector<float>> velocity;  ///< [worker]: DGC's momentum u
    std::vector<float> q;                      ///< PowerSGD's Q (cols x r), shared by the workers
};

/// grads[w][t]: worker w's gradient of tensor t.
using WorkerGradients = std::vector<std::vector<std::vector<float>>>;

/// One tensor's exchange at one iteration.
struct ExchangeStep {
    const Params& params;
    std::size_t workers = 1;
    double momentum = 0.9;   ///< the optimiser's (DGC's momentum correction uses it)
    double density = 0.0;    ///< the sparse schemes' density at this iteration (Compressor::density)
    std::uint64_t seed = 1;  ///< TernGrad's stochastic rounding
    std::size_t iteration = 0;
    std::size_t tensor = 0;  ///< index into the gradients' tensors
    TensorShape shape;
};

class Compressor {
public:
    virtual ~Compressor() = default;

    // ---- on the wire and on the node (the cluster) ----
    /// The collectives, in order, that exchange `g` among `ranks` ranks without a server.
    [[nodiscard]] virtual std::vector<WireCollective> wire(const Params& params, const Gradient& g,
                                                           std::size_t ranks) const = 0;
    /// With a parameter server: the values of each round (push to the servers, pull the sum).
    [[nodiscard]] virtual std::vector<std::uint64_t> server_rounds(const Params& /*params*/, const Gradient& g) const {
        return {g.values};
    }
    /// Bytes a rank pushes for a server's shard of `shard_values` values.
    [[nodiscard]] virtual std::uint64_t pushed_bytes(const Params& params, const Gradient& g,
                                                     std::uint64_t shard_values) const = 0;
    /// Bytes a rank pulls back for that shard, summed over `ranks` ranks' pushes.
    [[nodiscard]] virtual std::uint64_t pulled_bytes(const Params& params, const Gradient& g,
                                                     std::uint64_t shard_values, std::size_t ranks) const = 0;
    /// What compressing one node's gradient of `values` costs it; `factor_length` is Σ (n + m)
    /// over the gradient's n x m matrix blocks.
    [[nodiscard]] virtual Work node_work(const Params& params, std::uint64_t values,
                                         std::uint64_t factor_length) const = 0;

    // ---- on real gradients (`fastsim train`) ----
    /// Whether the scheme applies momentum itself (the optimiser then must not).
    [[nodiscard]] virtual bool applies_momentum() const { return false; }
    /// The fraction of values a sparse scheme sends at `iteration` (others: params.density).
    [[nodiscard]] virtual double density(const Params& params, std::size_t /*iteration*/,
                                         std::size_t /*iterations_per_epoch*/) const {
        return params.density;
    }
    /// Sets up a tensor's state for `workers` workers; `rng` is one SplitMix64 stream the
    /// tensors draw from in order.
    virtual void init(TensorState& state, const TensorShape& shape, std::size_t workers, const Params& params,
                      std::uint64_t& rng) const;
    /// Adds the averaged, decompressed gradient of tensor `step.tensor` over the workers to
    /// `out` (zeros on entry); returns the values sent (the scheme's own count).
    virtual std::size_t average(const ExchangeStep& step, TensorState& state, const WorkerGradients& grads,
                                std::vector<float>& out) const = 0;
};

/// One row per scheme (names come from here only).
struct CompressorDescriptor {
    Scheme scheme;
    const char* name;
    const Compressor& (*compressor)();
};
const std::array<CompressorDescriptor, kSchemeCount>& compressor_descriptors();
const Compressor& compressor_of(Scheme scheme);

}  // namespace fastsim::compression
