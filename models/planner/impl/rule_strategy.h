// SPDX-License-Identifier: MIT
#pragma once

// A planner defined by its rules alone (docs/planner.md, "Planners"): the types each layer may
// take, what it minimises (communication volume) and how it splits.

#include <array>
#include <functional>
#include <utility>

#include "planner/strategy.h"

namespace fastsim::planner {

class RuleStrategy final : public Strategy {
public:
    using Allowed = std::array<bool, kPartitionTypes>;

    /// `balances`: splits by speed unless --equal-split; `one_share`: one share per node, network-wide.
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

    /// Type I (the batch) alone.
    static Allowed batch_only(const PlanLayer&) { return {true, false, false, false}; }

private:
    PlannerKind m_kind;
    std::function<Allowed(const PlanLayer&)> m_allowed;
    bool m_balances;
    bool m_one_share;
};

}  // namespace fastsim::planner
