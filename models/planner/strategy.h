// SPDX-License-Identifier: MIT
#pragma once

// One extension point for parallelisation strategies (docs/planner.md, "Adding a planner"): a
// planner is one implementation of Strategy (graph, cluster, cost models -> plan); the plan
// becomes per-node programs of the op IR through walk_step / build_schedule.

#include <array>
#include <string_view>

#include "planner/hierarchy.h"
#include "planner/planner.h"

namespace fastsim::planner {

class Strategy {
public:
    virtual ~Strategy() = default;
    [[nodiscard]] virtual PlannerKind kind() const = 0;
    /// The rules each group of its hierarchy is planned with under `options`.
    [[nodiscard]] virtual PartitionRules rules(const PlannerOptions& options) const = 0;
    /// Whether --equal-split changes what it plans.
    [[nodiscard]] virtual bool equal_split_matters() const = 0;
    /// Its plan; by default the hierarchy planned with its rules. May return a plan that does not
    /// fit in memory (Plan::memory_shortfalls); make_plan refuses it.
    [[nodiscard]] virtual Plan plan(const PlanningInputs& inputs, const PlannerOptions& options) const {
        return plan_hierarchy(inputs, rules(options), options);
    }
};

/// One planner: its row in the descriptor table (models/planner/planners.cpp), the one place its
/// name is written. Adding a planner is one new file in models/planner/impl/ defining its
/// accessor, plus its row (and its PlannerKind enumerator).
struct PlannerDescriptor {
    PlannerKind kind;
    std::string_view name;          ///< planner.name, --planner and every report
    const Strategy& (*strategy)();  ///< its implementation, models/planner/impl/<name>.cpp
};

/// Every planner's row, in PlannerKind order (kAllPlanners).
const std::array<PlannerDescriptor, kAllPlanners.size()>& planner_descriptors();
/// The row of `kind`.
const PlannerDescriptor& descriptor_of(PlannerKind kind);
/// The strategy of a planner: descriptor_of(kind).strategy().
const Strategy& strategy_of(PlannerKind kind);
/// The types AccPar and Tofu may give a layer: I, II and III, and IV if it is
/// spatial_splittable.
std::array<bool, kPartitionTypes> every_type(const PlanLayer& layer);

}  // namespace fastsim::planner
