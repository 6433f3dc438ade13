// SPDX-License-Identifier: MIT
// The planners' descriptor table (docs/planner.md, "Adding a planner or a synchronisation
// scheme"): one row per planner, each implemented in its own file under models/planner/impl/.
#include <array>

#include "planner/strategy.h"

namespace fastsim::planner {

// Each planner's implementation (models/planner/impl/<name>.cpp).
const Strategy& data_parallel_strategy();
const Strategy& data_parallel_balanced_strategy();
const Strategy& owt_strategy();
const Strategy& hypar_strategy();
const Strategy& accpar_strategy();
const Strategy& tofu_strategy();
const Strategy& pipeline_strategy();
const Strategy& alpa_strategy();

namespace {

constexpr std::array<PlannerDescriptor, kAllPlanners.size()> kPlanners{{
    {PlannerKind::data_parallel, "data_parallel", data_parallel_strategy},
    {PlannerKind::data_parallel_balanced, "data_parallel_balanced", data_parallel_balanced_strategy},
    {PlannerKind::owt, "owt", owt_strategy},
    {PlannerKind::hypar, "hypar", hypar_strategy},
    {PlannerKind::accpar, "accpar", accpar_strategy},
    {PlannerKind::tofu, "tofu", tofu_strategy},
    {PlannerKind::pipeline, "pipeline", pipeline_strategy},
    {PlannerKind::alpa, "alpa", alpa_strategy},
}};

static_assert(rows_in_enum_order(kPlanners, &PlannerDescriptor::kind) && kPlanners.size() == kAllPlanners.size(),
              "every PlannerKind needs its row in kPlanners, in enumerator order");

}  // namespace

const std::array<PlannerDescriptor, kAllPlanners.size()>& planner_descriptors() { return kPlanners; }

const PlannerDescriptor& descriptor_of(PlannerKind kind) { return kPlanners[static_cast<std::size_t>(kind)]; }

const Strategy& strategy_of(PlannerKind kind) { return descriptor_of(kind).strategy(); }

const EnumNames<PlannerKind, kAllPlanners.size()>& enum_names(PlannerKind) {
    static constexpr EnumNames<PlannerKind, kAllPlanners.size()> kNames =
        names_of_rows(kPlanners, &PlannerDescriptor::kind);
    return kNames;
}

}  // namespace fastsim::planner
