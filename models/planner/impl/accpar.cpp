// SPDX-License-Identifier: MIT
// AccPar (docs/planner.md, "Planners"): a DP over Types I, II, III and IV minimising predicted time
// with balanced splits, which also weighs every other intra-layer planner's plan and alpa's
// on its objective and, when nothing fits in memory, re-plans with a memory penalty.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "planner/strategy.h"

namespace fastsim::planner {
namespace {

/// The other planners whose plans AccPar weighs on its objective: every intra-layer planner. A
/// new planner joins AccPar's search only when it is listed here.
constexpr std::array<PlannerKind, 5> kAccParCandidates{PlannerKind::data_parallel, PlannerKind::data_parallel_balanced,
                                                       PlannerKind::owt, PlannerKind::hypar, PlannerKind::tofu};

double objective_value(const Plan& plan, Objective objective) {
    return objective == Objective::time ? plan.step_s : plan.comm_bytes;
}

bool fits(const Plan& plan) { return plan.memory_shortfalls.empty(); }

/// AccPar's own DP plans are predicted (walked) only as far as this factor of the best step
/// among the candidates it already has: a plan slower than that is not kept, and predicting one
/// with thousands of replica sets to the end is the costliest part of planning. Above 1, since
/// the walk and the replay that ranks the candidates (replay_step) may differ, and a DP plan
/// beyond the bound ends its calibration rounds (plan_hierarchy).
constexpr double kGiveUpFactor = 1.5;

/// Candidates whose objectives differ by at most this fraction are ranked as equal.
constexpr double kTieTolerance = 1e-12;

/// AccPar's answer: its own DP's plan and every other planner's, the best on its objective among
/// those that fit (ties: the earlier in the order below); if none fits, DP plans with the memory
/// penalty weighted ever more.
Plan accpar_plan(const PlanningInputs& in, const PlannerOptions& options, const PartitionRules& own) {
    std::optional<Plan> best;
    int best_rank = 0;
    Plan smallest_shortfall;  // for the error when nothing fits
    int smallest_rank = 0;
    // `rank`: the candidate's place in AccPar's order (its DP's plans first), for ties.
    const auto consider = [&](Plan candidate, PlannerKind from, int rank) {
        const bool dp_given_up = rank <= 1 && candidate.step_s == std::numeric_limits<double>::infinity();
        if (dp_given_up) return;                                           // slower than the bound below
        // Ranked as reported; one that fits only as far as it could beat the best that fits.
        if (own.objective == Objective::time)
            replay_step(in, candidate,
                        best && fits(candidate) ? best->step_s : std::numeric_limits<double>::infinity());
        candidate.options = options;
        candidate.objective = own.objective;
        candidate.chosen_from = from;
        if (!fits(candidate)) {
            const auto over = [](const Plan& p) {
                return p.memory_shortfalls.empty()
                           ? 0.0
                           : p.memory_shortfalls.front().footprint_bytes / p.memory_shortfalls.front().capacity_bytes;
            };
            // The memory penalty's scale (below) comes from the intra-layer plans the DP makes.
            if (!candidate.pipeline &&
                (smallest_shortfall.groups.empty() || over(candidate) < over(smallest_shortfall) ||
                 (over(candidate) == over(smallest_shortfall) && rank < smallest_rank))) {
                smallest_shortfall = candidate;
                smallest_rank = rank;
            }
            return;
        }
        // Values within kTieTolerance of each other tie (rounding, e.g. a memoised walk's, must not
        // decide between equal plans): the earlier in the order wins.
        const double value = objective_value(candidate, own.objective);
        const double best_value = best ? objective_value(*best, own.objective) : 0;
        const bool tie = best && std::abs(value - best_value) <= kTieTolerance * std::abs(best_value);
        if (!best || (!tie && value < best_value) || (tie && rank < best_rank)) {
            best = std::move(candidate);
            best_rank = rank;
        }
    };
    // Every other planner's plan is in AccPar's search space (each layer a type at a split), and
    // its per-level DP cannot see the whole step; so those plans are candidates too, and AccPar
    // is never beaten on its objective (docs/planner.md, "Planners"). They come first, as they
    // bound how far the DP's plans are predicted.
    for (std::size_t i = 0; i < kAccParCandidates.size(); ++i) {
        PlannerOptions o = options;
        o.kind = kAccParCandidates[i];
        try {
            consider(plan_once(in, o), o.kind, 2 + static_cast<int>(i));
        } catch (const PlanError&) {
            // e.g. data parallelism with fewer samples than nodes: not a candidate
        }
    }
    const auto give_up_after_s = [&] {
        if (!best || own.objective != Objective::time) return std::numeric_limits<double>::infinity();
        return kGiveUpFactor * best->step_s;
    };
    consider(plan_hierarchy(in, own, options, 0, kRefinementRounds, give_up_after_s()), PlannerKind::accpar, 0);
    // The DP plans level by level from estimates that the calibration rounds then correct, so
    // more types can lead it to a worse plan; its plan over Types I-III alone is a candidate
    // too, and Type IV never makes AccPar's answer worse (docs/planner.md, "Type IV").
    const bool any_spatial = std::any_of(in.graph.layers.begin(), in.graph.layers.end(), [&](const PlanLayer& layer) {
        return own.allowed(layer)[static_cast<std::size_t>(PartitionType::spatial)];
    });
    if (any_spatial) {
        PartitionRules without_spatial = own;
        without_spatial.allowed = [&own](const PlanLayer& layer) {
            auto allowed = own.allowed(layer);
            allowed[static_cast<std::size_t>(PartitionType::spatial)] = false;
            return allowed;
        };
        try {
            consider(plan_hierarchy(in, without_spatial, options, 0, kRefinementRounds, give_up_after_s()),
                     PlannerKind::accpar, 1);
        } catch (const PlanError&) {
            // e.g. a depthwise layer, split by batch alone, has fewer samples than nodes
        }
    }
    // alpa's plan of the whole cluster too (which weighs the pipeline planner's, and stages on
    // sub-meshes each split by AccPar), where there are groups to pipeline over: the step it
    // predicts is the same objective. Above kAccParWeighsAlpaNodes, the pipeline planner's alone.
    if (options.weigh_pipelines && !in.cluster.preferred_cuts.empty() && own.objective == Objective::time) {
        const bool alpa = in.cluster.order.size() <= kAccParWeighsAlpaNodes;
        PlannerOptions o = options;
        o.kind = alpa ? PlannerKind::alpa : PlannerKind::pipeline;
        o.pipeline.intra = PlannerKind::accpar;
        try {
            consider(plan_once(in, o), o.kind, 7);
        } catch (const PlanError&) {
            // e.g. no cut into stages fits in memory: not a candidate
        }
    }
    // Nothing fits: the DP again with its options' memory weighed in, ever more heavily
    // (a Lagrangian relaxation of the capacity constraint).
    const double unit = objective_value(smallest_shortfall, own.objective) /
                        static_cast<double>(std::max<std::size_t>(1, in.graph.layers.size()));
    for (int k = 0; !best && k < kMemoryPenaltyRounds; ++k)
        consider(plan_hierarchy(in, own, options, unit * std::pow(4.0, k)), PlannerKind::accpar, 8 + k);
    if (best) return std::move(*best);
    return smallest_shortfall;
}

class AccParStrategy final : public Strategy {
public:
    [[nodiscard]] PlannerKind kind() const override { return PlannerKind::accpar; }
    [[nodiscard]] bool equal_split_matters() const override { return true; }
    [[nodiscard]] PartitionRules rules(const PlannerOptions& options) const override {
        PartitionRules r;
        r.allowed = every_type;
        r.objective = options.comm_only ? Objective::comm_volume : Objective::time;
        r.split = options.equal_split ? SplitRule::equal : SplitRule::balanced;
        return r;
    }
    [[nodiscard]] Plan plan(const PlanningInputs& inputs, const PlannerOptions& options) const override {
        return accpar_plan(inputs, options, rules(options));
    }
};

}  // namespace

const Strategy& accpar_strategy() {
    static const AccParStrategy accpar;
    return accpar;
}

}  // namespace fastsim::planner
