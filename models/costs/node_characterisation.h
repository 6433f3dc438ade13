// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <optional>
#include <cstdint>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "costs/node_type.h"
#include "node/node_model.h"
#include "planner/layer_graph.h"
#include "planner/planner.h"
#include "workload/vector_work.h"

namespace fastsim::costs {

/// The node characterisation (docs/planner.md, "Compute time"): the memoised node model's
/// counters for a layer's three phases at given dims on one node of a type, all its arrays.
/// A node of A arrays gives each array ceil(N / A) of every phase's output columns. A size beyond
/// 64 bits throws SizeOverflow (the caller names the layer).
class NodeCharacterisation {
public:
    /// Forward, backward-data, weight-gradient, and [planner::kWeightUpdate] the optimiser's update.
    using LayerCounters = std::array<node::PhaseCounters, 4>;

    /// `optimizer`: the update of each layer's weights at the end of the step (none: no update).
    NodeCharacterisation(std::vector<NodeType> types, const planner::LayerGraph& graph,
                         workload::Optimizer optimizer = workload::Optimizer::none);

    /// Counters of layer `layer` at `dims` on one node of `type` (cycles = the slowest array),
    /// its carried vector-unit layers' forward and backward passes included in its forward and
    /// backward-data phases.
    const LayerCounters& counters(std::size_t type, std::size_t layer, const planner::LayerDims& dims);
    /// Their cycles per phase (equal to counters()' cycles), memoised by shape class and dims: what
    /// the schedule's compute times come from, without keeping a plan's full counters.
    const std::array<std::uint64_t, 4>& cycles(std::size_t type, std::size_t layer, const planner::LayerDims& dims);
    /// The same as seconds per phase: the planner's compute model.
    planner::PhaseSeconds seconds(std::size_t type, std::size_t layer, const planner::LayerDims& dims);
    /// The cycles of the vector-unit layers `layer` carries at `dims` on one node of `type`
    /// (forward, backward; carried_counters), memoised by what they depend on (input channels
    /// only for a layer carrying one on its input).
    std::array<std::uint64_t, 2> carried_cycles(std::size_t type, std::size_t layer, const planner::LayerDims& dims);
    /// The cycles of the optimiser's update of `layer`'s weights at `dims` (update_counters),
    /// memoised by (type, weights); 0 without an optimiser.
    std::uint64_t update_cycles(std::size_t type, std::size_t layer, const planner::LayerDims& dims);
    /// Layer shapes characterised so far by seconds() (layers that lower alike counted once).
    [[nodiscard]] std::size_t entries() const { return m_cycles.size(); }
    /// Memo tiles run so far, before repeats: each phase job once for seconds() and once more
    /// for counters().
    [[nodiscard]] std::uint64_t tiles_run() const { return m_tiles_run; }
    /// The layer graph the characterisation (and so every plan made with it) is of.
    [[nodiscard]] const planner::LayerGraph& graph() const { return m_graph; }

private:
    struct Key {
        std::size_t type, layer;
        std::uint64_t batch, in, out, out_rows;
        bool operator==(const Key& o) const {
            return std::tie(type, layer, batch, in, out, out_rows) ==
                   std::tie(o.type, o.layer, o.batch, o.in, o.out, o.out_rows);
        }
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const;
    };
    /// One GEMM of a phase on one node type: repeated layers (ResNet blocks) lower to the same GEMMs.
    struct PhaseKey {
        std::size_t type, phase;
        std::uint64_t m, k, n;
        bool operator==(const PhaseKey& o) const {
            return std::tie(type, phase, m, k, n) == std::tie(o.type, o.phase, o.m, o.k, o.n);
        }
    };
    struct PhaseKeyHash {
        std::size_t operator()(const PhaseKey& k) const;
    };
    std::vector<NodeType> m_types;
    const planner::LayerGraph& m_graph;
    workload::Optimizer m_optimizer;
    /// update_counters by type, then weight count (the update depends on nothing else).
    std::vector<std::unordered_map<std::uint64_t, node::PhaseCounters>> m_updates;
    std::vector<node::ArrayTimingMemo> m_memo;  ///< per node type
    /// The GEMMs of `layer`'s phase `phase` (0 forward, 1 backward-data, 2 weight-gradient) as
    /// `lowered` (the layer at some dims) lowers them at `batch` on a node of `type`; none for
    /// the backward-data of a layer that reads only the network's input.
    [[nodiscard]] std::optional<node::StepPhase> step_phase(std::size_t type, std::size_t layer, std::size_t phase,
                                                            const workload::Layer& lowered, std::size_t batch) const;
    /// The forward [0] and backward [1] passes of the vector-unit layers `layer` carries, its
    /// share at `dims` of each (PlanLayer::vector_share), on one node of `type`: the work split
    /// evenly over the node's arrays (each array's vector unit takes 1 / arrays of it, rounded
    /// up), cycles those of one array, action counts summed over them.
    [[nodiscard]] std::array<node::PhaseCounters, 2> carried_counters(std::size_t type, std::size_t layer,
                                                                      const planner::LayerDims& dims) const;
    /// The optimiser's update of `layer`'s weights at `dims` (PlanLayer::weight_elements) on one
    /// node of `type`, on its vector unit (workload::optimizer_work; node::weight_update_phase at the
    /// type's weight width), split over its arrays as carried_counters splits.
    [[nodiscard]] node::PhaseCounters update_counters(std::size_t type, std::size_t layer,
                                                      const planner::LayerDims& dims) const;
    /// The col2im after `layer`'s backward-data at `dims` on one node of `type` whose lowering is
    /// col2im (workload::col2im_work), split over its arrays as carried_counters splits; zero
    /// counters otherwise.
    [[nodiscard]] node::PhaseCounters col2im_counters(std::size_t type, std::size_t layer,
                                                      const planner::LayerDims& dims) const;
    /// What the carried layers' cost at `dims` depends on: the dims without the input channels,
    /// unless a carried layer works on the input.
    [[nodiscard]] Key carried_key(std::size_t type, std::size_t layer, const planner::LayerDims& dims) const;
    /// carried_counters and update_counters, memoised for counters().
    const std::array<node::PhaseCounters, 2>& carried_counters_memo(std::size_t type, std::size_t layer,
                                                                    const planner::LayerDims& dims);
    const node::PhaseCounters& update_counters_memo(std::size_t type, std::size_t layer,
                                                    const planner::LayerDims& dims);
    /// Calls on_phase(phase, its step phase) for each phase `layer` runs at `dims`.
    template <typename PhaseFn>
    void for_each_phase(std::size_t type, std::size_t layer, const planner::LayerDims& dims, PhaseFn&& on_phase) const;
    /// The counters of one GEMM of `job` on one node of `type`, all its arrays.
    node::PhaseCounters run_gemm(std::size_t type, const node::PhaseJob& job);
    /// A phase's counters on one node of `type`: each of its GEMMs (memoised by shape) times its count.
    node::PhaseCounters phase_counters(std::size_t type, const node::StepPhase& s);
    /// A phase's cycles alike, from the memo of cycles.
    std::uint64_t phase_cycles(std::size_t type, const node::StepPhase& s);
    /// Per layer, the first layer that lowers to the same jobs at every dims (ResNet's repeated
    /// blocks): seconds() keys its memo by it.
    std::vector<std::size_t> m_shape_class;
    // The planner asks seconds() of millions of shapes and counters() of a plan's few: the
    // former keeps cycles only (a full LayerCounters is about 1 KB), by shape class.
    std::unordered_map<Key, std::array<std::uint64_t, 4>, KeyHash> m_cycles;
    std::unordered_map<PhaseKey, std::uint64_t, PhaseKeyHash> m_phase_cycles;
    std::unordered_map<Key, std::array<std::uint64_t, 2>, KeyHash> m_carried_cycles;
    std::unordered_map<Key, std::array<node::PhaseCounters, 2>, KeyHash> m_carried_counters;  ///< counters()'
    std::unordered_map<Key, LayerCounters, KeyHash> m_cache;                                  ///< counters()'
    std::unordered_map<PhaseKey, node::PhaseCounters, PhaseKeyHash> m_phases;                 ///< counters()'
    std::uint64_t m_tiles_run = 0;
};

}  // namespace fastsim::costs
