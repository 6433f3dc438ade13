// SPDX-License-Identifier: MIT
#pragma once

// The pipeline planners (docs/pipeline.md): stages on sub-meshes, each planned by an intra-layer
// planner; `pipeline` cuts where planner.pipeline says, `alpa` searches.

#include <string>

#include "planner/pipeline.h"
#include "planner/strategy.h"

namespace fastsim::planner {

class PipelineStrategy final : public Strategy {
public:
    using Make = Plan (*)(const PlanningInputs&, const PlannerOptions&);
    PipelineStrategy(PlannerKind kind, Make make) : m_kind(kind), m_make(make) {}
    [[nodiscard]] PlannerKind kind() const override { return m_kind; }
    [[nodiscard]] bool equal_split_matters() const override { return true; }
    [[nodiscard]] PartitionRules rules(const PlannerOptions& options) const override {
        PlannerOptions intra = options;
        intra.kind = is_pipeline(options.pipeline.intra) ? PlannerKind::accpar : options.pipeline.intra;
        PartitionRules r = strategy_of(intra.kind).rules(intra);
        r.objective = Objective::time;
        return r;
    }
    [[nodiscard]] Plan plan(const PlanningInputs& in, const PlannerOptions& options) const override {
        if (is_pipeline(options.pipeline.intra))
            throw PlanError("planner.pipeline.intra must be an intra-layer planner, not '" +
                            std::string(to_string(options.pipeline.intra)) + "'");
        if (!in.exchange) throw PlanError("internal: pipeline planning needs the exchange model");
        // A stage's all-reduces through servers another stage holds (or shares) are not modelled.
        if (in.gradient_sync && in.gradient_sync->uses_parameter_servers())
            throw PlanError(
                "a pipeline with gradient_sync.algorithm parameter_server is not simulated (its stages "
                "would share the servers); use an all-reduce algorithm, or an intra-layer planner");
        return m_make(in, options);
    }

private:
    PlannerKind m_kind;
    Make m_make;
};

}  // namespace fastsim::planner
