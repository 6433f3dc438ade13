// SPDX-License-Identifier: MIT
#pragma once

// A plan describes itself (docs/planner.md, "Plans as input"): its parts, each a hierarchy plan
// of some layers on some nodes, and, for a pipeline, the pipeline's own figures. Reports, the
// lowering's callers and the energy roll-up walk these instead of asking which kind of plan
// they hold, so a new kind of plan is a change inside the planner only.

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "planner/pipeline_plan.h"
#include "planner/planner.h"

namespace fastsim::planner {

/// One part of a step planned as one hierarchy: for a hierarchy plan the whole network on every
/// node; for a pipeline each stage's layers on its nodes.
struct PlanPart {
    const LayerGraph& graph;                ///< its layers, at the batch they run at (a stage's: the micro-batch)
    const Plan& plan;                       ///< its hierarchy plan over `nodes`
    std::size_t first_layer = 0;            ///< the network layer of graph's layer 0
    const std::vector<std::size_t>& nodes;  ///< node ids, in topology order
    std::optional<std::size_t> stage;       ///< its pipeline stage; none outside a pipeline
};

/// What a plan tells a writer. describe() calls pipeline() first, for a pipeline plan only,
/// then part() for each part in network order.
class PlanVisitor {
public:
    virtual ~PlanVisitor() = default;
    virtual void pipeline(const PipelinePlan&) {}
    virtual void part(const PlanPart&) {}
};

/// Walks `plan`, made over `graph` (the whole network), for `visitor`.
void describe(const Plan& plan, const LayerGraph& graph, PlanVisitor& visitor);

/// `on_part` for each part of `plan` (describe's part calls).
void for_each_part(const Plan& plan, const LayerGraph& graph, const std::function<void(const PlanPart&)>& on_part);

/// How many times each node runs its layers in one step: a pipeline's micro-batches, else 1.
[[nodiscard]] std::size_t microbatches(const Plan& plan);

}  // namespace fastsim::planner
