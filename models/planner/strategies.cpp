// SPDX-License-Identifier: MIT
// The planners that follow fixed rules (docs/planner.md, "Planners"): the types each layer may
// take, what they minimise and how they split. AccPar, which also weighs other plans, is in
// accpar_strategy.cpp.
#include <array>

#include "planner/strategy.h"

namespace fastsim::planner {
namespace {

using Allowed = std::array<bool, kPartitionTypes>;

/// A planner defined by its rules alone.
class RuleStrategy final : public Strategy {
public:
    RuleStrategy(PlannerKind kind, std::function<Allowed(const PlanLayer&)> allowed, bool balances, bool one_share)
        : m_kind(kind), m_allowed(std::move(allowed)), m_balances(balances), m_one_share(one_share) {}

    [[nodiscard]] PlannerKind kind() const override { return m_kind; }
    [[nodiscard]] bool equal_split_matters() const override { return m_balances; }
    [[nodiscard]] PartitionRules rules(const PlannerOptions& options) const override {
        PartitionRules r;
        r.allowed = m_allowed;
        r.objective = Objective::comm_volume;
        r.split = m_balances && !options.equal_split ? SplitRule::balanced : SplitRule::equal;
        r.one_share = m_one_share;
        return r;
    }

private:
    PlannerKind m_kind;
    std::function<Allowed(const PlanLayer&)> m_allowed;
    bool m_balances;   ///< splits by speed unless --equal-split
    bool m_one_share;  ///< one share per node, network-wide
};

Allowed batch_only(const PlanLayer&) { return {true, false, false, false}; }

}  // namespace

std::array<bool, kPartitionTypes> every_type(const PlanLayer& layer) {
    return {true, true, true, layer.spatial_splittable()};
}

const Strategy& strategy_of(PlannerKind kind) {
    static const RuleStrategy data_parallel(PlannerKind::data_parallel, batch_only, false, false);
    static const RuleStrategy data_parallel_balanced(PlannerKind::data_parallel_balanced, batch_only, true, true);
    static const RuleStrategy owt(
        PlannerKind::owt,
        [](const PlanLayer& l) { return l.layer.kind == workload::LayerKind::conv ? Allowed{true, false, false, false} : Allowed{false, true, false, false}; },
        false, false);
    static const RuleStrategy hypar(PlannerKind::hypar, [](const PlanLayer&) { return Allowed{true, true, false, false}; }, false, false);
    static const RuleStrategy tofu(PlannerKind::tofu, every_type, false, false);
    switch (kind) {
    case PlannerKind::data_parallel: return data_parallel;
    case PlannerKind::data_parallel_balanced: return data_parallel_balanced;
    case PlannerKind::owt: return owt;
    case PlannerKind::hypar: return hypar;
    case PlannerKind::accpar: return accpar_strategy();
    case PlannerKind::tofu: return tofu;
    case PlannerKind::pipeline:
    case PlannerKind::alpa: return pipeline_strategy(kind);
    }
    return accpar_strategy();
}

}  // namespace fastsim::planner
