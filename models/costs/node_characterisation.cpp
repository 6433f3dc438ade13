// SPDX-License-Identifier: MIT
#include "costs/node_characterisation.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/checked.h"
#include "common/units.h"
#include "node/training_step.h"
#include "workload/layer.h"
#include "workload/vector_work.h"

namespace fastsim::costs {
namespace {

/// The counters of one phase job split over `arrays` arrays along its output columns;
/// `tiles_run` counts the memo tiles simulated.
node::PhaseCounters on_arrays(node::PhaseJob job, const node::NodeParams& params, std::uint64_t arrays,
                              node::ArrayTimingMemo& memo, std::uint64_t& tiles_run) {
    const std::uint64_t n = job.shape.n;
    const std::uint64_t per_array = (n + arrays - 1) / arrays;
    const std::uint64_t busy = (n + per_array - 1) / per_array;
    const std::uint64_t last = n - (busy - 1) * per_array;
    job.shape.n = per_array;
    const node::PhaseCounters full = node::run_phase_memo(job, params, memo);
    tiles_run += full.tiles;
    node::PhaseCounters total = full.repeated(busy - 1);
    if (last > 0) {
        job.shape.n = last;
        const node::PhaseCounters rest = node::run_phase_memo(job, params, memo);
        tiles_run += rest.tiles;
        total += rest;
    }
    total.cycles = full.cycles;  // the arrays run side by side
    return total;
}

/// A vector-unit job `s` of a whole node of `t` split evenly over its arrays: each array's
/// vector unit takes 1 / arrays of the work (rounded up); the cycles are one array's, the
/// action counts every array's.
node::PhaseCounters on_vector_units(node::StepPhase s, const NodeType& t) {
    const auto arrays = static_cast<std::uint64_t>(t.arrays);
    const std::uint64_t macs = s.vector.macs;  // the whole job's, however it is shared
    s.vector.work = workload::share_of(s.vector.work, 1, arrays);
    s.vector.macs = 0;
    const node::PhaseCounters one = node::run_vector_memo(s.vector, t.node);
    node::PhaseCounters all = one.repeated(arrays);
    all.cycles = one.cycles;  // the arrays' vector units run side by side
    all.macs = macs;
    return all;
}

/// Everything of `p` that for_each_phase reads at given dims: the
/// trace layer's sizes without its name, inputs or place, the graph's sizes, and whether it
/// reads only the network input (no backward-data).
std::string shape_signature(const planner::PlanLayer& p) {
    std::string key;
    const auto put = [&key](std::int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
    const auto put_layer = [&put](const workload::Layer& l) {
        for (const std::int64_t v : {std::int64_t(l.kind),
                                     std::int64_t(l.in_height),
                                     std::int64_t(l.in_width),
                                     std::int64_t(l.in_channels),
                                     std::int64_t(l.kernel_height),
                                     std::int64_t(l.kernel_width),
                                     std::int64_t(l.filters),
                                     std::int64_t(l.stride),
                                     std::int64_t(l.stride_width),
                                     std::int64_t(l.padding),
                                     std::int64_t(l.groups),
                                     std::int64_t(l.dilation),
                                     std::int64_t(l.pool_mode),
                                     std::int64_t(l.partial_windows),
                                     std::int64_t(l.in_features),
                                     std::int64_t(l.out_features),
                                     std::int64_t(l.tokens),
                                     std::int64_t(l.m),
                                     std::int64_t(l.k),
                                     std::int64_t(l.n),
                                     std::int64_t(l.repeat),
                                     std::int64_t(l.inputs.size())})
            put(v);
    };
    put_layer(p.layer);
    for (const workload::HostedLayer& h : p.carried()) {
        put_layer(h.layer);
        put(h.on_input);
        put(h.backward);
    }
    for (const std::uint64_t v :
         {p.dims.batch, p.dims.in_channels, p.dims.out_channels, p.dims.out_rows, p.in_positions, p.out_positions,
          p.kernel_area, p.in_height, p.in_width, p.out_width, p.kernel_height, p.stride, p.padding,
          std::uint64_t(p.has_weights), p.groups, std::uint64_t(p.has_backward_data())})
        put(static_cast<std::int64_t>(v));
    return key;
}

}  // namespace

std::size_t NodeCharacterisation::KeyHash::operator()(const Key& k) const {
    // Fibonacci hashing of the type, then FNV-1a-style mixing of the dims.
    std::size_t h = k.type * 0x9E3779B97F4A7C15ull ^ k.layer;
    for (std::uint64_t v : {k.batch, k.in, k.out, k.out_rows}) h = (h ^ v) * 0x100000001B3ull;
    return h;
}

std::size_t NodeCharacterisation::PhaseKeyHash::operator()(const PhaseKey& k) const {
    std::size_t h = k.type * 0x9E3779B97F4A7C15ull ^ k.phase;
    for (std::uint64_t v : {k.m, k.k, k.n}) h = (h ^ v) * 0x100000001B3ull;
    return h;
}

NodeCharacterisation::NodeCharacterisation(std::vector<NodeType> types, const planner::LayerGraph& graph,
                                           workload::Optimizer optimizer)
    : m_types(std::move(types)),
      m_graph(graph),
      m_optimizer(optimizer),
      m_updates(m_types.size()),
      m_memo(m_types.size()),
      m_shape_class(graph.layers.size()) {
    std::unordered_map<std::string, std::size_t> first;
    for (std::size_t l = 0; l < graph.layers.size(); ++l)
        m_shape_class[l] = first.emplace(shape_signature(graph.layers[l]), l).first->second;
}

std::optional<node::StepPhase> NodeCharacterisation::step_phase(std::size_t type, std::size_t layer, std::size_t phase,
                                                                const workload::Layer& lowered,
                                                                std::size_t batch) const {
    const auto training_phase = static_cast<fmac::TrainingPhase>(phase);
    if (training_phase == fmac::TrainingPhase::backward_data && !m_graph.layers[layer].has_backward_data())
        return std::nullopt;
    return node::layer_phase(lowered, layer, batch, training_phase, m_types[type].precision, {}, m_types[type].node);
}

node::PhaseCounters NodeCharacterisation::col2im_counters(std::size_t type, std::size_t layer,
                                                          const planner::LayerDims& dims) const {
    const NodeType& t = m_types[type];
    const workload::Layer lowered = m_graph.layers[layer].with_dims(dims);
    if (t.node.lowering.backward_data != workload::BackwardDataLowering::col2im ||
        !m_graph.layers[layer].has_backward_data() || workload::conv_on_vector_unit(lowered, t.node.lowering))
        return {};
    const workload::VectorWork work = workload::col2im_work(lowered, dims.batch);
    if (work.ops == 0) return {};
    return on_vector_units(node::col2im_phase(layer, work, t.precision, {}), t);
}

node::PhaseCounters NodeCharacterisation::run_gemm(std::size_t type, const node::PhaseJob& job) {
    const NodeType& t = m_types[type];
    return on_arrays(job, t.node, static_cast<std::uint64_t>(t.arrays), m_memo[type], m_tiles_run);
}

node::PhaseCounters NodeCharacterisation::phase_counters(std::size_t type, const node::StepPhase& s) {
    if (s.on_vector_unit) return on_vector_units(s, m_types[type]);
    node::PhaseCounters total;
    for (const node::PhaseGemm& g : s.gemms) {
        const PhaseKey key{type, static_cast<std::size_t>(s.phase), g.job.shape.m, g.job.shape.k, g.job.shape.n};
        auto it = m_phases.find(key);
        if (it == m_phases.end()) it = m_phases.emplace(key, run_gemm(type, g.job)).first;
        total += node::counted(it->second, g).repeated(g.count);
    }
    total.macs = s.macs;
    return total;
}

std::uint64_t NodeCharacterisation::phase_cycles(std::size_t type, const node::StepPhase& s) {
    if (s.on_vector_unit) return on_vector_units(s, m_types[type]).cycles;
    std::uint64_t cycles = 0;
    for (const node::PhaseGemm& g : s.gemms) {
        const PhaseKey key{type, static_cast<std::size_t>(s.phase), g.job.shape.m, g.job.shape.k, g.job.shape.n};
        auto it = m_phase_cycles.find(key);
        if (it == m_phase_cycles.end()) it = m_phase_cycles.emplace(key, run_gemm(type, g.job).cycles).first;
        cycles = checked_add(cycles, checked_mul(it->second, g.count, "cycles of a phase"), "cycles of a phase");
    }
    return cycles;
}

std::array<node::PhaseCounters, 2> NodeCharacterisation::carried_counters(std::size_t type, std::size_t layer,
                                                                          const planner::LayerDims& dims) const {
    std::array<node::PhaseCounters, 2> c{};
    const planner::PlanLayer& p = m_graph.layers[layer];
    const NodeType& t = m_types[type];
    for (const workload::HostedLayer& h : p.carried()) {
        const auto [numerator, denominator] = p.vector_share(dims, h.on_input);
        if (numerator == 0) continue;
        for (const bool backward : {false, true}) {
            if (backward && !h.backward) continue;
            const workload::VectorWork work =
                workload::share_of(workload::vector_work(h.layer, dims.batch, backward), numerator, denominator);
            c[backward ? 1 : 0] +=
                on_vector_units(node::vector_step_phase(
                                    layer, backward ? fmac::TrainingPhase::backward_data : fmac::TrainingPhase::forward,
                                    work, t.precision, {}),
                                t);
        }
    }
    return c;
}

NodeCharacterisation::Key NodeCharacterisation::carried_key(std::size_t type, std::size_t layer,
                                                            const planner::LayerDims& dims) const {
    const std::vector<workload::HostedLayer>& carried = m_graph.layers[layer].carried();
    const bool reads_input = std::any_of(carried.begin(), carried.end(), [](const auto& h) { return h.on_input; });
    return {type, layer, dims.batch, reads_input ? dims.in_channels : 0, dims.out_channels, dims.out_rows};
}

const std::array<node::PhaseCounters, 2>& NodeCharacterisation::carried_counters_memo(std::size_t type,
                                                                                      std::size_t layer,
                                                                                      const planner::LayerDims& dims) {
    const Key key = carried_key(type, layer, dims);
    auto it = m_carried_counters.find(key);
    if (it == m_carried_counters.end()) it = m_carried_counters.emplace(key, carried_counters(type, layer, dims)).first;
    return it->second;
}

std::array<std::uint64_t, 2> NodeCharacterisation::carried_cycles(std::size_t type, std::size_t layer,
                                                                  const planner::LayerDims& dims) {
    if (m_graph.layers[layer].carried().empty()) return {0, 0};
    const Key key = carried_key(type, layer, dims);
    auto it = m_carried_cycles.find(key);
    if (it == m_carried_cycles.end()) {
        const std::array<node::PhaseCounters, 2> c = carried_counters(type, layer, dims);
        it = m_carried_cycles.emplace(key, std::array<std::uint64_t, 2>{c[0].cycles, c[1].cycles}).first;
    }
    return it->second;
}

node::PhaseCounters NodeCharacterisation::update_counters(std::size_t type, std::size_t layer,
                                                          const planner::LayerDims& dims) const {
    const planner::PlanLayer& p = m_graph.layers[layer];
    const NodeType& t = m_types[type];
    const workload::VectorWork work = workload::optimizer_work(p.weight_elements(dims), m_optimizer);
    if (work.ops == 0) return {};
    return on_vector_units(node::weight_update_phase(layer, work, t.precision.weights), t);
}

const node::PhaseCounters& NodeCharacterisation::update_counters_memo(std::size_t type, std::size_t layer,
                                                                      const planner::LayerDims& dims) {
    const std::uint64_t weights = m_graph.layers[layer].weight_elements(dims);
    auto it = m_updates[type].find(weights);
    if (it == m_updates[type].end()) it = m_updates[type].emplace(weights, update_counters(type, layer, dims)).first;
    return it->second;
}

std::uint64_t NodeCharacterisation::update_cycles(std::size_t type, std::size_t layer, const planner::LayerDims& dims) {
    if (m_optimizer == workload::Optimizer::none) return 0;
    return update_counters_memo(type, layer, dims).cycles;
}

template <typename PhaseFn>
void NodeCharacterisation::for_each_phase(std::size_t type, std::size_t layer, const planner::LayerDims& dims,
                                          PhaseFn&& on_phase) const {
    const workload::Layer lowered = m_graph.layers[layer].with_dims(dims);
    for (std::size_t p = 0; p < 3; ++p) {
        const std::optional<node::StepPhase> s = step_phase(type, layer, p, lowered, dims.batch);
        if (s) on_phase(p, *s);
    }
}

const NodeCharacterisation::LayerCounters& NodeCharacterisation::counters(std::size_t type, std::size_t layer,
                                                                          const planner::LayerDims& dims) {
    const Key key{type, layer, dims.batch, dims.in_channels, dims.out_channels, dims.out_rows};
    if (auto it = m_cache.find(key); it != m_cache.end()) return it->second;
    LayerCounters c{};
    std::array<std::uint64_t, 4> cycles{};
    for_each_phase(type, layer, dims, [&](std::size_t p, const node::StepPhase& s) { c[p] = phase_counters(type, s); });
    c[1] += col2im_counters(type, layer, dims);
    if (!m_graph.layers[layer].carried().empty()) {
        const std::array<node::PhaseCounters, 2>& vector = carried_counters_memo(type, layer, dims);
        c[0] += vector[0];
        c[1] += vector[1];
    }
    if (m_optimizer != workload::Optimizer::none) c[planner::kWeightUpdate] = update_counters_memo(type, layer, dims);
    for (std::size_t p = 0; p < c.size(); ++p) cycles[p] = c[p].cycles;
    m_cycles.emplace(key, cycles);
    return m_cache.emplace(key, c).first->second;
}

planner::PhaseSeconds NodeCharacterisation::seconds(std::size_t type, std::size_t layer,
                                                    const planner::LayerDims& dims) {
    const std::array<std::uint64_t, 4>& c = cycles(type, layer, dims);
    const std::uint64_t hz = m_types[type].node.clock_hz;
    planner::PhaseSeconds s{};
    for (std::size_t p = 0; p < s.size(); ++p) s[p] = to_seconds(Cycles(c[p]), hz);
    return s;
}

const std::array<std::uint64_t, 4>& NodeCharacterisation::cycles(std::size_t type, std::size_t layer,
                                                                 const planner::LayerDims& dims) {
    layer = m_shape_class[layer];
    const Key key{type, layer, dims.batch, dims.in_channels, dims.out_channels, dims.out_rows};
    auto it = m_cycles.find(key);
    if (it == m_cycles.end()) {
        std::array<std::uint64_t, 4> cycles{};
        for_each_phase(type, layer, dims,
                       [&](std::size_t p, const node::StepPhase& s) { cycles[p] = phase_cycles(type, s); });
        cycles[1] = checked_add(cycles[1], col2im_counters(type, layer, dims).cycles, "cycles of a phase");
        const std::array<std::uint64_t, 2> vector = carried_cycles(type, layer, dims);
        cycles[0] += vector[0];
        cycles[1] += vector[1];
        cycles[planner::kWeightUpdate] = update_cycles(type, layer, dims);
        it = m_cycles.emplace(key, cycles).first;
    }
    return it->second;
}

}  // namespace fastsim::costs
