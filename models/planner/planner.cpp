// SPDX-License-Identifier: MIT
#include "planner/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "planner/pipeline_plan.h"
#include "planner/strategy.h"

namespace fastsim::planner {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::string describe_shortfall(const Plan& plan, const ClusterView& cluster,
                               const std::vector<std::string>& type_names) {
    const MemoryShortfall& s = plan.memory_shortfalls.front();
    const auto gib = [](double bytes) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", bytes / double(1ull << 30));
        return std::string(buf);
    };
    const std::size_t type = cluster.node_type[s.node];
    return "no plan of " + std::string(to_string(plan.options.kind)) + " fits in memory: node " +
           std::to_string(s.node) + " (" +
           (type < type_names.size() ? type_names[type] : "type " + std::to_string(type)) + ") needs " +
           gib(s.footprint_bytes) + " GiB of its " + gib(s.capacity_bytes) + " GiB, " +
           gib(s.footprint_bytes - s.capacity_bytes) + " GiB short (" + std::to_string(plan.memory_shortfalls.size()) +
           " nodes over capacity)";
}

}  // namespace

const EnumNames<Objective, 2>& enum_names(Objective) {
    static constexpr EnumNames<Objective, 2> kNames{
        {{"time", Objective::time}, {"comm_volume", Objective::comm_volume}}};
    return kNames;
}

const EnumNames<SplitRule, 2>& enum_names(SplitRule) {
    static constexpr EnumNames<SplitRule, 2> kNames{{{"balanced", SplitRule::balanced}, {"equal", SplitRule::equal}}};
    return kNames;
}

const EnumNames<PipelineSchedule, 2>& enum_names(PipelineSchedule) {
    static constexpr EnumNames<PipelineSchedule, 2> kNames{{
        {"gpipe", PipelineSchedule::gpipe},
        {"1f1b", PipelineSchedule::one_f_one_b},
    }};
    return kNames;
}

bool same_partition(const Plan& a, const Plan& b) {
    for (std::size_t g = 0; g < a.choices.size(); ++g)
        for (std::size_t l = 0; l < a.choices[g].size(); ++l)
            if (a.choices[g][l].type != b.choices[g][l].type || a.choices[g][l].split_a != b.choices[g][l].split_a)
                return false;
    return true;
}

Objective objective_of(const PlannerOptions& options) { return strategy_of(options.kind).rules(options).objective; }

bool equal_split_matters(PlannerKind kind) { return strategy_of(kind).equal_split_matters(); }

SplitRule split_of(const PlannerOptions& options) { return strategy_of(options.kind).rules(options).split; }

double LayerChoice::forward_comm_s(const ExchangeCost& x) const {
    double s = x.seconds(forward_out);
    for (const auto& v : forward_in) s += x.seconds(v);
    return s;
}

double LayerChoice::backward_comm_s(const ExchangeCost& x) const {
    double s = x.seconds(backward_out);
    for (const auto& v : backward_in) s += x.seconds(v);
    return s;
}

double LayerChoice::comm_bytes() const {
    double b = forward_out.max() + backward_out.max() + weight_sync.max();
    for (const auto& v : forward_in) b += v.max();
    for (const auto& v : backward_in) b += v.max();
    return b;
}

std::size_t bisection_cut(const ClusterView& cluster, std::size_t lo, std::size_t hi) {
    std::size_t cut = lo + (hi - lo + 1) / 2;
    const double middle = (static_cast<double>(lo) + static_cast<double>(hi)) / 2;
    double nearest = kInfinity;
    for (std::size_t c : cluster.preferred_cuts)
        if (c > lo && c < hi && std::abs(static_cast<double>(c) - middle) < nearest) {
            nearest = std::abs(static_cast<double>(c) - middle);
            cut = c;
        }
    return cut;
}

std::vector<Group> bisect(const ClusterView& cluster, const ExchangeModel& exchange) {
    std::vector<Group> groups;
    struct Range {
        std::size_t lo, hi, depth;
        int parent;
        bool is_a;
    };
    std::vector<Range> pending{{0, cluster.order.size(), 0, -1, false}};
    for (std::size_t i = 0; i < pending.size(); ++i) {  // breadth first: parents before children
        const Range r = pending[i];
        Group g;
        g.nodes.assign(cluster.order.begin() + static_cast<std::ptrdiff_t>(r.lo),
                       cluster.order.begin() + static_cast<std::ptrdiff_t>(r.hi));
        g.depth = r.depth;
        const int index = static_cast<int>(groups.size());
        if (r.parent >= 0)
            (r.is_a ? groups[static_cast<std::size_t>(r.parent)].side_a
                    : groups[static_cast<std::size_t>(r.parent)].side_b) = index;
        if (r.hi - r.lo > 1) {
            const std::size_t cut = bisection_cut(cluster, r.lo, r.hi);
            pending.push_back({r.lo, cut, r.depth + 1, index, true});
            pending.push_back({cut, r.hi, r.depth + 1, index, false});
            const std::vector<std::size_t> a(cluster.order.begin() + static_cast<std::ptrdiff_t>(r.lo),
                                             cluster.order.begin() + static_cast<std::ptrdiff_t>(cut));
            const std::vector<std::size_t> b(cluster.order.begin() + static_cast<std::ptrdiff_t>(cut),
                                             cluster.order.begin() + static_cast<std::ptrdiff_t>(r.hi));
            g.exchange = exchange(a, b);
        }
        groups.push_back(std::move(g));
    }
    return groups;
}

void check_fits_in_memory(const Plan& plan, const PlanningInputs& in) {
    if (!plan.memory_shortfalls.empty()) throw PlanError(describe_shortfall(plan, in.cluster, in.node_type_names));
}

void replay_step(const PlanningInputs& in, Plan& plan, double incumbent_s) {
    if (!in.replay || plan.step_replayed) return;
    const ReplayedStep replayed = in.replay(plan, incumbent_s);
    plan.step_s = replayed.step_s;
    plan.replayed_ops = replayed.ops;
    plan.step_replayed = true;
    if (plan.pipeline) {
        auto pipeline = std::make_shared<PipelinePlan>(*plan.pipeline);
        pipeline->set_step(plan.step_s);  // the bubble the replayed step leaves
        plan.pipeline = std::move(pipeline);
    }
}

void replay_step(const PlanningInputs& in, Plan& plan) { replay_step(in, plan, kInfinity); }

bool operator==(const PipelineOptions& a, const PipelineOptions& b) {
    return a.stages == b.stages && a.stage_layers == b.stage_layers && a.microbatches == b.microbatches &&
           a.schedule == b.schedule && a.intra == b.intra;
}

bool operator==(const PlannerOptions& a, const PlannerOptions& b) {
    return a.kind == b.kind && a.comm_only == b.comm_only && a.equal_split == b.equal_split &&
           a.pipeline == b.pipeline && a.weigh_pipelines == b.weigh_pipelines;
}

const Plan* PlanMemo::find(const PlannerOptions& options) const {
    for (const auto& [made_with, plan] : m_plans)
        if (made_with == options) return &plan;
    return nullptr;
}

void PlanMemo::keep(const PlannerOptions& options, const Plan& plan) {
    if (!find(options)) m_plans.emplace_back(options, plan);
}

Plan plan_once(const PlanningInputs& in, const PlannerOptions& options) {
    if (in.plans)
        if (const Plan* made = in.plans->find(options)) return *made;
    Plan plan = strategy_of(options.kind).plan(in, options);
    if (in.plans) in.plans->keep(options, plan);
    return plan;
}

Plan make_plan(const PlanningInputs& in, const PlannerOptions& options) {
    Plan plan = plan_once(in, options);
    replay_step(in, plan);
    check_fits_in_memory(plan, in);
    return plan;
}

}  // namespace fastsim::planner
