// SPDX-License-Identifier: MIT
#include "output/cluster_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>

#include "common/csv_writer.h"
#include "common/json_writer.h"
#include "common/output_files.h"
#include "common/units.h"
#include "planner/plan_view.h"
#include "output/run_summary.h"
#include "output/table.h"

namespace fastsim::output {
namespace {

double ms(double s) { return s * 1e3; }

/// report.json's name of a stage span's pass (pipeline.stages[].spans[].pass).
const char* span_pass(planner::StepPart part) {
    switch (part) {
    case planner::StepPart::forward: return "forward";
    case planner::StepPart::backward: return "backward";
    default: return "weight_update";
    }
}

/// The fraction of a step of `step` a channel busy for `busy` was busy; 0 for an empty step.
double utilisation(Picoseconds busy, Picoseconds step) {
    return step > Picoseconds(0) ? static_cast<double>(busy.count()) / static_cast<double>(step.count()) : 0;
}

/// The groups from the root to node `node`'s leaf, non-leaves only.
std::vector<std::size_t> path_to(const planner::Plan& plan, std::size_t node) {
    std::vector<std::size_t> path;
    std::size_t g = 0;
    while (!plan.groups[g].leaf()) {
        path.push_back(g);
        const auto& a = plan.groups[static_cast<std::size_t>(plan.groups[g].side_a)].nodes;
        g = static_cast<std::size_t>(std::find(a.begin(), a.end(), node) != a.end() ? plan.groups[g].side_a
                                                                                    : plan.groups[g].side_b);
    }
    return path;
}

std::string types_along(const planner::Plan& plan, const std::vector<std::size_t>& path, std::size_t layer) {
    std::string s;
    for (std::size_t g : path) s += std::string(s.empty() ? "" : "/") + planner::to_string(plan.choices[g][layer].type);
    return s.empty() ? "-" : s;
}

std::string planner_label(const planner::Plan& plan) {
    std::string s(planner::to_string(plan.options.kind));
    s += plan.objective == planner::Objective::time ? ", minimising time" : ", minimising communication volume";
    s += plan.split == planner::SplitRule::balanced ? ", balanced splits" : ", equal splits";
    if (plan.chosen_from != plan.options.kind)
        s += "; the plan is " + std::string(planner::to_string(plan.chosen_from)) +
             "'s, which does better on this objective than the DP's";
    return s;
}

void print_cluster_summary(std::ostream& out, const config::Params& params) {
    const auto& c = params.cluster;
    out << "cluster: " << c.node_type.size() << " nodes (";
    const auto describe = [&](std::size_t g) {
        return std::to_string(c.groups[g].count) + " x " + c.groups[g].node_type + " on a " +
               config::describe_topology(c.groups[g]);
    };
    // Runs of consecutive groups alike are one entry: "64 groups of 16 x tpu_v3_like on a torus2d …".
    for (std::size_t g = 0, run = 1; g < c.groups.size(); g += run) {
        const std::string group = describe(g);
        for (run = 1; g + run < c.groups.size() && describe(g + run) == group;) ++run;
        out << (g ? ", " : "") << (run > 1 ? std::to_string(run) + " groups of " : "") << group;
    }
    if (c.upper_topology)
        out << "; groups joined by a " << config::to_string(*c.upper_topology) << " at "
            << c.upper_link.bandwidth_gb_per_s << " GB/s";
    out << "), " << params.workload.network.name << " batch " << params.workload.batch << "\n";
}

/// "memory: node 3 (fast32) is the fullest, 1.234 of 8.000 GiB (weights …)", or that it is not checked.
std::string memory_line(const config::Params& params, const planner::Plan& plan) {
    if (plan.footprint.empty()) return "";
    std::size_t fullest = 0;
    double fullest_share = -1;
    for (std::size_t n = 0; n < plan.footprint.size(); ++n) {
        const double capacity = params.cluster.node_types[params.cluster.node_type[n]].dram_capacity_gib * 0x1p30;
        const double share = capacity > 0 ? plan.footprint[n].total() / capacity : plan.footprint[n].total() * 1e-30;
        if (share > fullest_share) {
            fullest_share = share;
            fullest = n;
        }
    }
    const planner::Footprint& f = plan.footprint[fullest];
    const config::NodeTypeParams& t = params.cluster.node_types[params.cluster.node_type[fullest]];
    const auto gib = [](double bytes) { return Table::fixed(bytes / 0x1p30, 3); };
    std::string line =
        "memory: node " + std::to_string(fullest) + " (" + t.name + ") is the fullest, " + gib(f.total()) +
        (t.dram_capacity_gib > 0 ? " of " + gib(t.dram_capacity_gib * 0x1p30) + " GiB" : " GiB (capacity not given)") +
        " = weights " + gib(f.weights) + " + weight gradients " + gib(f.weight_gradients) + " + optimiser state " +
        gib(f.optimizer_state) + " + stashed activations " + gib(f.stashed_activations) + " + buffers " +
        gib(f.buffers) + "\n";
    return line;
}

std::string node_list(const std::vector<std::size_t>& nodes) {
    if (nodes.empty()) return "-";
    bool contiguous = true;
    for (std::size_t i = 1; i < nodes.size(); ++i) contiguous = contiguous && nodes[i] == nodes[i - 1] + 1;
    if (contiguous)
        return nodes.size() == 1 ? std::to_string(nodes[0])
                                 : std::to_string(nodes.front()) + "-" + std::to_string(nodes.back());
    std::string s;
    for (const std::size_t n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
    return s;
}

/// "fc1..fc4" for a stage's layers.
std::string layer_span(const planner::LayerGraph& graph, const planner::PipelineStage& s) {
    const std::string& first = graph.layers[s.first_layer].name;
    return s.end_layer - s.first_layer == 1 ? first : first + ".." + graph.layers[s.end_layer - 1].name;
}

/// A pipeline plan's stages, as `fastsim plan` prints them.
void print_pipeline(std::ostream& out, const planner::LayerGraph& graph, const planner::PipelinePlan& p) {
    out << "\npipeline: " << p.stages.size() << " stages, schedule " << name_of(p.schedule) << ", " << p.microbatches
        << " micro-batches of " << p.microbatch_size << " samples\n\n";
    Table t({"stage", "layers", "nodes", "forward_ms", "backward_ms", "busy_ms", "in_flight", "memory_gib"});
    for (std::size_t s = 0; s < p.stages.size(); ++s) {
        const planner::PipelineStage& st = p.stages[s];
        t.add_row({std::to_string(s), layer_span(graph, st), node_list(st.nodes), Table::fixed(ms(st.forward_s), 3),
                   Table::fixed(ms(st.backward_s), 3), Table::fixed(ms(st.busy_s), 3), std::to_string(st.in_flight),
                   Table::fixed(st.memory_bytes / 0x1p30, 3)});
    }
    t.print(out);
    out << "bubble fraction " << Table::fixed(p.bubble_fraction, 4) << " (1 - stage busy time / (stages x step))";
    if (p.objective_s > 0) out << "; alpa's objective " << Table::fixed(ms(p.objective_s), 3) << " ms";
    out << "\n";
}

}  // namespace

void print_plan(std::ostream& out, const config::Params& params, const run::ClusterPlan& planned) {
    const planner::Plan& plan = planned.plan;
    print_cluster_summary(out, params);
    std::size_t depth = 0;
    for (const auto& g : plan.groups) depth = std::max(depth, g.depth);
    out << "planner: " << planner_label(plan) << "; " << depth << " levels of bisection\n\n";
    const auto path = path_to(plan, 0);
    Table t({"layer", "types_root_to_node0", "root_alpha", "compute_ms", "forward_comm_ms", "backward_comm_ms",
             "sync_comm_ms", "predicted_ms"});
    for (std::size_t l = 0; l < planned.graph.layers.size(); ++l) {
        const double compute = std::accumulate(plan.compute_s[l].begin(), plan.compute_s[l].end(), 0.0);
        t.add_row({planned.graph.layers[l].name, types_along(plan, path, l),
                   plan.groups[0].leaf() ? "-" : Table::fixed(plan.choices[0][l].alpha, 3),
                   Table::fixed(ms(compute), 3), Table::fixed(ms(plan.forward_comm_s[l]), 3),
                   Table::fixed(ms(plan.backward_comm_s[l]), 3), Table::fixed(ms(plan.sync_comm_s[l]), 3),
                   Table::fixed(ms(plan.layer_step_s[l]), 3)});
    }
    t.print(out);
    struct PipelineTable : planner::PlanVisitor {
        std::ostream& out;
        const planner::LayerGraph& graph;
        PipelineTable(std::ostream& o, const planner::LayerGraph& g) : out(o), graph(g) {}
        void pipeline(const planner::PipelinePlan& p) override { print_pipeline(out, graph, p); }
    } pipeline_table(out, planned.graph);
    planner::describe(plan, planned.graph, pipeline_table);
    double compute = 0, exchanges = 0, sync = 0;
    for (std::size_t l = 0; l < planned.graph.layers.size(); ++l) {
        compute += std::accumulate(plan.compute_s[l].begin(), plan.compute_s[l].end(), 0.0);
        exchanges += plan.forward_comm_s[l] + plan.backward_comm_s[l];
        sync += plan.sync_comm_s[l];
    }
    out << "\npredicted step: " << Table::fixed(ms(plan.step_s), 3) << " ms (slowest node per phase, summed: compute "
        << Table::fixed(ms(compute), 3) << " ms; exchanges " << Table::fixed(ms(exchanges), 3)
        << " ms; gradient all-reduces " << Table::fixed(ms(sync), 3) << " ms, overlapping the backward pass)\n"
        << "communication volume: " << Table::fixed(plan.comm_bytes / 1e6, 3)
        << " MB (every group's exchanges, busiest direction of each)\n"
        << memory_line(params, plan) << "planned in " << Table::fixed(planned.planning_s * 1e3, 1) << " ms\n";
}

/// A plan's groups as plan.json lists them, as items of the array open in `j`: each with its
/// nodes and, unless a leaf, its children and per layer the type, alpha, split_a and the
/// planner's compute estimates (seconds).
void write_plan_groups(JsonWriter& j, const planner::Plan& plan) {
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        const auto& group = plan.groups[g];
        j.begin_object().key("id").integer(g).key("depth").integer(group.depth).key("nodes").begin_array();
        for (const auto node : group.nodes) j.integer(node);
        j.end_array();
        if (!group.leaf()) {
            const auto& choices = plan.choices[g];
            const auto list = [&](const char* key, const auto& write) {
                j.key(key).begin_array();
                for (const planner::LayerChoice& c : choices) write(c);
                j.end_array();
            };
            j.key("side_a").integer(group.side_a).key("side_b").integer(group.side_b);
            list("types", [&](const planner::LayerChoice& c) { j.string(planner::to_string(c.type)); });
            list("alpha", [&](const planner::LayerChoice& c) { j.number(c.alpha); });
            list("split_a", [&](const planner::LayerChoice& c) { j.integer(c.split_a); });
            list("compute_a_s", [&](const planner::LayerChoice& c) { j.number(c.compute_a_s); });
            list("compute_b_s", [&](const planner::LayerChoice& c) { j.number(c.compute_b_s); });
        }
        j.end_object();
    }
}

namespace {

/// "all_reduces": the schedule's gradient all-reduces by choice (AllReduceUse).
void write_all_reduces(JsonWriter& j, const std::vector<interconnect::AllReduceUse>& uses) {
    j.key("all_reduces").begin_array();
    for (const interconnect::AllReduceUse& u : uses) {
        j.begin_object().key("algorithm").string(u.algorithms).key("dimensions").string(u.dimensions);
        j.key("ranks").integer(u.ranks).key("count").integer(u.count).key("bytes").integer(u.bytes).end_object();
    }
    j.end_array();
}

}  // namespace

std::string plan_json(const config::Params& params, const run::ClusterPlan& planned,
                      const std::vector<interconnect::AllReduceUse>* all_reduces) {
    const planner::Plan& plan = planned.plan;
    JsonWriter j;
    j.begin_object(JsonLayout::one_per_line);
    j.key("config").string(params.source_file).key("network").string(params.workload.network.name);
    j.key("batch").integer(params.workload.batch).key("nodes").integer(params.cluster.node_type.size());
    j.key("planner").string(planner::to_string(plan.options.kind)).key("objective").string(name_of(plan.objective));
    j.key("split").string(name_of(plan.split)).key("chosen_from").string(planner::to_string(plan.chosen_from));
    j.key("comm_only").boolean(plan.options.comm_only).key("equal_split").boolean(plan.options.equal_split);
    j.key("node_types").begin_array();
    for (const std::size_t type : params.cluster.node_type) j.string(params.cluster.node_types[type].name);
    j.end_array();
    j.key("predicted_step_s").number(plan.step_s).key("comm_bytes").number(plan.comm_bytes);
    j.key("planning_s").number(planned.planning_s);
    j.key("layers").begin_array(JsonLayout::one_per_line);
    for (std::size_t l = 0; l < planned.graph.layers.size(); ++l) {
        j.begin_object().key("name").string(planned.graph.layers[l].name).key("compute_s").begin_array();
        for (const double phase_s : plan.compute_s[l]) j.number(phase_s);
        j.end_array().key("forward_comm_s").number(plan.forward_comm_s[l]);
        j.key("backward_comm_s").number(plan.backward_comm_s[l]).key("sync_comm_s").number(plan.sync_comm_s[l]);
        j.key("predicted_s").number(plan.layer_step_s[l]).end_object();
    }
    j.end_array();
    struct PipelineJson : planner::PlanVisitor {
        JsonWriter& j;
        const planner::Plan& plan;
        const planner::LayerGraph& graph;
        PipelineJson(JsonWriter& o, const planner::Plan& pl, const planner::LayerGraph& g) : j(o), plan(pl), graph(g) {}
        void pipeline(const planner::PipelinePlan& p) override {
            j.key("pipeline").begin_object().key("schedule").string(name_of(p.schedule));
            j.key("intra").string(planner::to_string(plan.options.pipeline.intra));
            j.key("microbatches").integer(p.microbatches).key("microbatch_size").integer(p.microbatch_size);
            j.key("bubble_fraction").number(p.bubble_fraction).key("predicted_step_s").number(p.step_s);
            if (p.objective_s > 0) j.key("alpa_objective_s").number(p.objective_s);
            j.key("stages").begin_array(JsonLayout::one_per_line);
            for (const planner::PipelineStage& st : p.stages) {
                j.begin_object().key("layers").begin_array();
                for (std::size_t l = st.first_layer; l < st.end_layer; ++l) j.string(graph.layers[l].name);
                j.end_array().key("nodes").begin_array();
                for (const auto node : st.nodes) j.integer(node);
                j.end_array().key("predicted_s").number(st.busy_s);
                j.key("microbatch_forward_s").number(st.forward_s).key("microbatch_backward_s").number(st.backward_s);
                j.key("sync_tail_s").number(st.sync_tail_s).key("in_flight").integer(st.in_flight);
                j.key("memory_bytes").integer(std::llround(st.memory_bytes));
                j.key("intra_planner").string(planner::to_string(st.plan.chosen_from));
                j.key("objective").string(name_of(st.plan.objective)).key("split").string(name_of(st.plan.split));
                j.key("groups").begin_array(JsonLayout::one_per_line);
                write_plan_groups(j, st.plan);
                j.end_array().end_object();
            }
            j.end_array().end_object();
        }
    } pipeline_json(j, plan, planned.graph);
    planner::describe(plan, planned.graph, pipeline_json);
    j.key("groups").begin_array(JsonLayout::one_per_line);
    write_plan_groups(j, plan);
    j.end_array().key("memory").begin_array(JsonLayout::one_per_line);
    for (std::size_t n = 0; n < plan.footprint.size(); ++n) {
        const planner::Footprint& f = plan.footprint[n];
        const config::NodeTypeParams& t = params.cluster.node_types[params.cluster.node_type[n]];
        j.begin_object().key("node").integer(n).key("memory_bytes").integer(std::llround(f.total()));
        j.key("capacity_bytes").integer(std::llround(t.dram_capacity_gib * 0x1p30));
        j.key("weights_bytes").integer(std::llround(f.weights));
        j.key("weight_gradients_bytes").integer(std::llround(f.weight_gradients));
        j.key("optimizer_state_bytes").integer(std::llround(f.optimizer_state));
        j.key("stashed_activations_bytes").integer(std::llround(f.stashed_activations));
        j.key("buffers_bytes").integer(std::llround(f.buffers)).end_object();
    }
    j.end_array();
    if (all_reduces) write_all_reduces(j, *all_reduces);
    j.end_object();
    return j.take();
}

namespace {

/// One row of plan.csv: a layer of a non-leaf group (or, for a plan whose whole set of nodes is
/// one leaf, of that node), with the pipeline stage it belongs to. Seconds and bytes.
struct PlanRow {
    std::size_t group = 0, depth = 0, nodes = 1, side_a_nodes = 0;
    std::string_view layer;
    std::string_view type = "-";
    double alpha = 1;
    std::optional<std::uint64_t> split_a;  ///< none for a one-node plan
    planner::LayerDims dims;
    double compute_a_s = 0, compute_b_s = 0, forward_comm_s = 0, backward_comm_s = 0, sync_comm_s = 0;
    double comm_bytes = 0;
    std::optional<std::size_t> stage;  ///< none outside a pipeline
    std::string stage_nodes;           ///< node_list of the stage's nodes; empty outside a pipeline
};

/// plan.csv's rows of `plan` over `graph`: a row per layer and non-leaf group; a plan whose
/// whole set of nodes is one leaf (one node) gets a row per layer of type "-", its node's compute.
/// `stage` and `stage_nodes` fill the last two columns.
void add_plan_rows(std::vector<PlanRow>& rows, const planner::Plan& plan, const planner::LayerGraph& graph,
                   std::optional<std::size_t> stage, const std::string& stage_nodes) {
    if (plan.groups.front().leaf()) {
        for (std::size_t l = 0; l < graph.layers.size(); ++l) {
            const planner::PhaseSeconds& t = plan.compute_s[l];
            PlanRow row;
            row.layer = graph.layers[l].name;
            row.dims = graph.layers[l].dims;
            row.compute_a_s = t[0] + t[1] + t[2] + t[planner::kWeightUpdate];
            row.stage = stage;
            row.stage_nodes = stage_nodes;
            rows.push_back(std::move(row));
        }
        return;
    }
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        const auto& group = plan.groups[g];
        if (group.leaf()) continue;
        const std::size_t side_a = plan.groups[static_cast<std::size_t>(group.side_a)].nodes.size();
        for (std::size_t l = 0; l < plan.choices[g].size(); ++l) {
            const planner::LayerChoice& ch = plan.choices[g][l];
            rows.push_back(PlanRow{g, group.depth, group.nodes.size(), side_a, graph.layers[l].name,
                                   planner::to_string(ch.type), ch.alpha, ch.split_a, ch.dims, ch.compute_a_s,
                                   ch.compute_b_s, ch.forward_comm_s(group.exchange),
                                   ch.backward_comm_s(group.exchange), ch.sync_comm_s(group.exchange), ch.comm_bytes(),
                                   stage, stage_nodes});
        }
    }
}

}  // namespace

std::string plan_csv(const config::Params&, const run::ClusterPlan& planned) {
    std::vector<PlanRow> rows;
    planner::for_each_part(planned.plan, planned.graph, [&](const planner::PlanPart& part) {
        add_plan_rows(rows, part.plan, part.graph, part.stage ? std::optional<std::size_t>(*part.stage) : std::nullopt,
                      part.stage ? node_list(part.nodes) : "");
    });
    const auto count = [](std::size_t PlanRow::*member) {
        return [member](const PlanRow& row) { return CsvCell::integer(row.*member); };
    };
    const auto number = [](double PlanRow::*member) {
        return [member](const PlanRow& row) { return CsvCell::number(row.*member); };
    };
    const auto dim = [](std::uint64_t planner::LayerDims::*member) {
        return [member](const PlanRow& row) { return CsvCell::integer(row.dims.*member); };
    };
    const CsvWriter<PlanRow> csv({
        {"group", count(&PlanRow::group)},
        {"depth", count(&PlanRow::depth)},
        {"nodes", count(&PlanRow::nodes)},
        {"side_a_nodes", count(&PlanRow::side_a_nodes)},
        {"layer", [](const PlanRow& row) { return CsvCell::text(row.layer); }},
        {"type", [](const PlanRow& row) { return CsvCell::text(row.type); }},
        {"alpha", number(&PlanRow::alpha)},
        {"split_a", [](const PlanRow& row) { return row.split_a ? CsvCell::integer(*row.split_a) : CsvCell::empty(); }},
        {"batch", dim(&planner::LayerDims::batch)},
        {"in_channels", dim(&planner::LayerDims::in_channels)},
        {"out_channels", dim(&planner::LayerDims::out_channels)},
        {"compute_a_s", number(&PlanRow::compute_a_s)},
        {"compute_b_s", number(&PlanRow::compute_b_s)},
        {"forward_comm_s", number(&PlanRow::forward_comm_s)},
        {"backward_comm_s", number(&PlanRow::backward_comm_s)},
        {"sync_comm_s", number(&PlanRow::sync_comm_s)},
        {"comm_bytes", number(&PlanRow::comm_bytes)},
        {"stage", [](const PlanRow& row) { return row.stage ? CsvCell::integer(*row.stage) : CsvCell::empty(); }},
        {"stage_nodes", [](const PlanRow& row) { return CsvCell::text(row.stage_nodes); }},
    });
    return csv.table(rows);
}

namespace {

/// Clusters of more nodes than this print a summary per node type and the slowest nodes
/// instead of a row per node (nodes.csv has every row).
constexpr std::size_t kMaxNodeRows = 32;
constexpr std::size_t kSlowestNodeRows = 8;

/// The node table: a row per node, or for a large cluster a row per node type (means over its
/// nodes, energy summed) and the kSlowestNodeRows nodes busy longest (compute and waits).
void print_nodes(std::ostream& out, const config::Params& params, const run::ClusterStepResult& r) {
    const auto busy_percent = [&](double compute_s) { return r.step_s > 0 ? 100 * compute_s / r.step_s : 0; };
    const auto node_table = [&](const std::vector<std::size_t>& nodes) {
        Table n({"node", "type", "compute_ms", "comm_wait_ms", "idle_ms", "busy_percent", "energy_uj"});
        for (const std::size_t i : nodes) {
            const auto& node = r.nodes[i];
            n.add_row({std::to_string(i), params.cluster.node_types[params.cluster.node_type[i]].name,
                       Table::fixed(ms(node.compute_s), 3), Table::fixed(ms(node.wait_s), 3),
                       Table::fixed(ms(node.idle_s), 3), Table::fixed(busy_percent(node.compute_s), 1),
                       Table::fixed(node.energy.total_pj() * 1e-6, 1)});
        }
        n.print(out);
    };
    std::vector<std::size_t> order(r.nodes.size());
    std::iota(order.begin(), order.end(), 0);
    if (r.nodes.size() <= kMaxNodeRows) {
        node_table(order);
        return;
    }
    const std::size_t types = params.cluster.node_types.size();
    std::vector<std::size_t> count(types, 0);
    std::vector<double> compute(types, 0), wait(types, 0), idle(types, 0), most(types, 0), energy(types, 0);
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const std::size_t t = params.cluster.node_type[i];
        const run::NodeReport& node = r.nodes[i];
        ++count[t];
        compute[t] += node.compute_s;
        wait[t] += node.wait_s;
        idle[t] += node.idle_s;
        most[t] = std::max(most[t], node.compute_s + node.wait_s);
        energy[t] += node.energy.total_pj();
    }
    out << "nodes by type (times are means over the type's nodes, most_busy_ms its busiest node's compute and "
           "waits, energy_uj the sum; nodes.csv has every node)\n";
    Table by_type(
        {"type", "nodes", "compute_ms", "comm_wait_ms", "idle_ms", "busy_percent", "most_busy_ms", "energy_uj"});
    for (std::size_t t = 0; t < types; ++t) {
        if (count[t] == 0) continue;
        const auto n = static_cast<double>(count[t]);
        by_type.add_row({params.cluster.node_types[t].name, std::to_string(count[t]),
                         Table::fixed(ms(compute[t] / n), 3), Table::fixed(ms(wait[t] / n), 3),
                         Table::fixed(ms(idle[t] / n), 3), Table::fixed(busy_percent(compute[t] / n), 1),
                         Table::fixed(ms(most[t]), 3), Table::fixed(energy[t] * 1e-6, 1)});
    }
    by_type.print(out);
    // The slowest: busy longest (compute and waits), ties by node number.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return r.nodes[a].compute_s + r.nodes[a].wait_s > r.nodes[b].compute_s + r.nodes[b].wait_s;
    });
    order.resize(kSlowestNodeRows);
    out << "\nthe " << kSlowestNodeRows << " nodes busy longest (compute and waits), of " << r.nodes.size() << "\n";
    node_table(order);
}

}  // namespace

void print_cluster_step(std::ostream& out, const config::Params& params, const run::ClusterStepResult& r) {
    const planner::Plan& plan = r.planned.plan;
    const auto& layers = r.planned.graph.layers;
    print_cluster_summary(out, params);
    out << "planner: " << planner_label(plan) << "\n\n";
    const auto path = path_to(plan, 0);
    Table t({"layer", "types_root_to_node0", "planned_ms", "simulated_mean_node_ms", "error_percent"});
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const double planned = plan.layer_step_s[l];
        const double simulated = r.layer_simulated_s[l];
        t.add_row({layers[l].name, types_along(plan, path, l), Table::fixed(ms(planned), 3),
                   Table::fixed(ms(simulated), 3),
                   simulated > 0 ? Table::fixed(100 * (planned - simulated) / simulated, 1) : "-"});
    }
    t.print(out);
    out << "\n";
    print_nodes(out, params, r);
    struct StageTable : planner::PlanVisitor {
        std::ostream& out;
        const run::ClusterStepResult& r;
        StageTable(std::ostream& o, const run::ClusterStepResult& res) : out(o), r(res) {}
        void pipeline(const planner::PipelinePlan& p) override {
            out << "\npipeline: " << p.stages.size() << " stages, schedule " << name_of(p.schedule) << ", "
                << p.microbatches << " micro-batches of " << p.microbatch_size << " samples\n\n";
            Table st({"stage", "layers", "nodes", "planned_busy_ms", "simulated_busy_ms", "simulated_idle_ms"});
            for (std::size_t s = 0; s < p.stages.size(); ++s)
                st.add_row({std::to_string(s), layer_span(r.planned.graph, p.stages[s]), node_list(p.stages[s].nodes),
                            Table::fixed(ms(p.stages[s].busy_s), 3), Table::fixed(ms(r.stages[s].busy_s), 3),
                            Table::fixed(ms(r.stages[s].idle_s), 3)});
            st.print(out);
            out << "bubble fraction: simulated " << Table::fixed(r.bubble_fraction, 4) << ", planned "
                << Table::fixed(p.bubble_fraction, 4) << "\n";
        }
    } stage_table(out, r);
    planner::describe(plan, r.planned.graph, stage_table);
    double busiest = 0, mean = 0;
    std::size_t used = 0;
    for (const auto& ch : r.simulated.channels) {
        const double u = utilisation(ch.busy_ps, r.simulated.end_ps);
        busiest = std::max(busiest, u);
        if (ch.transfers > 0) {
            mean += u;
            ++used;
        }
    }
    const auto& e = r.compute_energy;
    const double total_pj = e.total_pj() + r.link_energy_pj + r.compression_energy_pj;
    const config::GradientSyncParams& sync = params.cluster.gradient_sync;
    out << "\ngradient sync: " << to_string(sync.algorithm) << ", compression " << compression::to_string(sync.scheme)
        << ", staleness " << sync.staleness << ": " << Table::fixed(static_cast<double>(r.sync_bytes) * 1e-6, 3)
        << " MB on the wire (uncompressed " << Table::fixed(static_cast<double>(r.sync_bytes_uncompressed) * 1e-6, 3)
        << " MB); exposed " << Table::fixed(ms(r.exposed_sync_s), 3) << " ms";
    if (sync.staleness > 0) out << "; the delayed update saves " << Table::fixed(ms(r.staleness_overlap_s), 3) << " ms";
    const auto& hosted = params.workload.network.hosted;
    if (std::any_of(hosted.begin(), hosted.end(),
                    [](const auto& h) { return h.layer.kind == workload::LayerKind::batchnorm; }))
        out << "\nbatchnorm statistics: "
            << (params.cluster.batchnorm_statistics == config::BatchnormStatistics::local
                    ? "local (each node normalises with its own samples' statistics, as PyTorch DDP)"
                    : "synchronised (all-reduced across every split of the samples or image rows, as "
                      "SyncBatchNorm)");
    if (r.sparse_gathers_over_dense > 0)
        out << "\nsparse all-gathers: " << r.sparse_gathers_over_dense << " of " << r.sparse_gathers
            << " carry more than the dense gradient (ranks x density " << sync.density << " > 1)"
            << (sync.algorithm == config::GradientSyncAlgorithm::best
                    ? "; best sends each as a dense all-reduce where that is faster"
                    : "; gradient_sync.algorithm best would send them as dense all-reduces where faster");
    if (r.flow_level_all_reduces > 0)
        out << "\nflow-level all-reduces: " << r.flow_level_all_reduces << " over more than "
            << sync.message_level_max_ranks
            << " ranks (cluster.gradient_sync.message_level_max_ranks) simulated by their cost alone, not their "
               "messages; the links' traffic, energy and utilisation leave them out";
    if (!r.all_reduces.empty()) {
        out << "\nall-reduces:";
        for (std::size_t i = 0; i < r.all_reduces.size(); ++i) {
            const interconnect::AllReduceUse& u = r.all_reduces[i];
            out << (i ? "," : "") << " " << u.count << " x " << u.algorithms << " over "
                << (u.dimensions == std::to_string(u.ranks)
                        ? u.dimensions + " ranks"
                        : u.dimensions + " (" + std::to_string(u.ranks) + " ranks)");
        }
    }
    if (r.stage_level)
        out << "\nstage-level simulation: the step's " << r.ops << " ops stand as " << r.piece_ops
            << " ops in pieces (each stage's forward, backward and last backward, each stage's sends) "
               "simulated alone and composed (cluster.pipeline_simulation; docs/pipeline.md, \"Stage-level "
               "simulation\"); contention between pieces that overlap is left out";
    out << "\nsimulated step: " << Table::fixed(ms(r.step_s), 3) << " ms; planned " << Table::fixed(ms(plan.step_s), 3)
        << " ms (prediction error " << Table::fixed(100 * (plan.step_s - r.step_s) / r.step_s, 1) << "%)\n"
        << "links: " << used << " of " << r.simulated.channels.size() << " channels used, utilisation mean "
        << Table::fixed(used ? 100 * mean / static_cast<double>(used) : 0, 1) << "%, busiest "
        << Table::fixed(100 * busiest, 1) << "%\n"
        << "energy: " << Table::fixed(total_pj * 1e-6, 1) << " uJ";
    for (const energy::EnergyComponent& c : energy::kEnergyComponents)
        out << (c.pj == energy::kEnergyComponents.front().pj ? " = " : " + ") << c.name << " "
            << Table::fixed(e.*c.pj * 1e-6, 1);
    out << " + links " << Table::fixed(r.link_energy_pj * 1e-6, 1)
        << (r.compression_energy_pj > 0 ? " + compression " + Table::fixed(r.compression_energy_pj * 1e-6, 1)
                                        : std::string())
        << "\n";
    const std::optional<energy::AreaBreakdown> area = run::cluster_area(params);
    const Efficiency f = cluster_efficiency(params, r, area);
    print_area_and_power(out, area, params.energy.process_nm, params.cluster.node_types.front().energy,
                         " over " + std::to_string(r.nodes.size()) + " nodes",
                         "DRAM interfaces, link SerDes and switches", f);
    out << "simulated " << (r.stage_level ? r.piece_ops : r.ops) << " ops in " << Table::fixed(r.simulation_s * 1e3, 1)
        << " ms; planned in " << Table::fixed(r.planned.planning_s * 1e3, 1) << " ms\n";
}

namespace {

/// report.json's area (the cluster's, every node's by component, and one node's of each type)
/// and the efficiency a paper quotes, as a node run writes them.
void write_area_and_efficiency(JsonWriter& j, const config::Params& params, const run::ClusterStepResult& r) {
    const std::optional<energy::AreaBreakdown> area = run::cluster_area(params);
    const Efficiency f = cluster_efficiency(params, r, area);
    write_area_and_efficiency(j, area, params.energy.process_nm, params.cluster.node_types.front().energy, f);
    if (area) {
        j.key("node_area_mm2").begin_object();
        for (const config::NodeTypeParams& t : params.cluster.node_types)
            if (const std::optional<energy::AreaBreakdown> one = run::node_type_area(params, t))
                j.key(t.name).number(one->total_mm2());
            else
                j.key(t.name).null();
        j.end_object();
    } else {
        j.key("node_area_mm2").null();
    }
}

}  // namespace

std::string cluster_step_json(const config::Params& params, const run::ClusterStepResult& r,
                              const run::RunProvenance& provenance) {
    const auto& e = r.compute_energy;
    JsonWriter j;
    j.begin_object(JsonLayout::one_per_line);
    j.key("config").string(params.source_file).key("fastsim_version").string(provenance.fastsim_version);
    j.key("command_line").string(provenance.command_line).key("network").string(params.workload.network.name);
    j.key("batch").integer(params.workload.batch).key("nodes").integer(r.nodes.size());
    j.key("planner").string(planner::to_string(r.planned.plan.options.kind));
    j.key("batchnorm_statistics").string(config::to_string(params.cluster.batchnorm_statistics));
    j.key("simulated_step_s").number(r.step_s).key("planned_step_s").number(r.planned.plan.step_s);
    j.key("comm_bytes_planned").number(r.planned.plan.comm_bytes);
    j.key("sync_bytes").integer(r.sync_bytes).key("sync_bytes_uncompressed").integer(r.sync_bytes_uncompressed);
    j.key("sparse_gathers").integer(r.sparse_gathers);
    j.key("sparse_gathers_over_dense").integer(r.sparse_gathers_over_dense);
    j.key("flow_level_all_reduces").integer(r.flow_level_all_reduces);
    j.key("pipeline_simulation").string(r.stage_level ? "stage_level" : "message_level");
    j.key("simulated_ops").integer(r.stage_level ? r.piece_ops : r.ops);
    j.key("exposed_sync_s").number(r.exposed_sync_s).key("staleness_overlap_s").number(r.staleness_overlap_s);
    write_all_reduces(j, r.all_reduces);
    j.key("energy_pj").begin_object();
    for (const energy::EnergyComponent& c : energy::kEnergyComponents) j.key(c.name).number(e.*c.pj);
    j.key("links").number(r.link_energy_pj).key("compression").number(r.compression_energy_pj);
    j.key("total").number(e.total_pj() + r.link_energy_pj + r.compression_energy_pj).end_object();
    write_area_and_efficiency(j, params, r);
    struct PipelineJson : planner::PlanVisitor {
        JsonWriter& j;
        const run::ClusterStepResult& r;
        PipelineJson(JsonWriter& o, const run::ClusterStepResult& res) : j(o), r(res) {}
        void pipeline(const planner::PipelinePlan& p) override {
            j.key("pipeline").begin_object().key("schedule").string(name_of(p.schedule));
            j.key("microbatches").integer(p.microbatches).key("bubble_fraction").number(r.bubble_fraction);
            j.key("planned_bubble_fraction").number(p.bubble_fraction).key("stages").begin_array();
            for (std::size_t s = 0; s < r.stages.size(); ++s) {
                j.begin_object().key("busy_s").number(r.stages[s].busy_s).key("idle_s").number(r.stages[s].idle_s);
                j.key("planned_busy_s").number(p.stages[s].busy_s).key("spans").begin_array();
                for (const run::StageSpan& span : r.stages[s].spans) {
                    j.begin_object().key("pass").string(span_pass(span.part));
                    if (span.part != planner::StepPart::weight_update) j.key("microbatch").integer(span.microbatch);
                    j.key("start_s").number(span.start_s).key("end_s").number(span.end_s).end_object();
                }
                j.end_array().end_object();
            }
            j.end_array().end_object();
        }
    } pipeline_json(j, r);
    planner::describe(r.planned.plan, r.planned.graph, pipeline_json);
    if (params.workload.steps > 1) {
        const double energy_pj = e.total_pj() + r.link_energy_pj + r.compression_energy_pj;
        const auto steps = static_cast<double>(params.workload.steps);
        j.key("whole_run").begin_object().key("steps").integer(params.workload.steps);
        j.key("total_seconds").number(r.step_s * steps).key("total_energy_pj").number(energy_pj * steps);
        j.end_object();
    }
    j.key("links").begin_array(JsonLayout::one_per_line);
    const auto& channels = params.cluster.topology->channels();
    for (std::size_t c = 0; c < r.simulated.channels.size(); ++c) {
        const auto& s = r.simulated.channels[c];
        j.begin_object().key("from").integer(channels[c].from).key("to").integer(channels[c].to);
        j.key("bytes").integer(s.bytes).key("busy_s").number(to_seconds(s.busy_ps));
        j.key("utilisation").number(utilisation(s.busy_ps, r.simulated.end_ps)).end_object();
    }
    j.end_array().end_object();
    return j.take();
}

std::string cluster_layers_csv(const config::Params&, const run::ClusterStepResult& r) {
    const planner::Plan& plan = r.planned.plan;
    const auto seconds = [](const std::vector<double>& per_layer) {
        return [&per_layer](std::size_t l) { return CsvCell::number(per_layer[l]); };
    };
    const auto phase = [&plan](std::size_t p) {
        return [&plan, p](std::size_t l) { return CsvCell::number(plan.compute_s[l][p]); };
    };
    // One row per layer (its index in the graph).
    const CsvWriter<std::size_t> csv({
        {"layer", [&](std::size_t l) { return CsvCell::text(r.planned.graph.layers[l].name); }},
        {"type_root",
         [&](std::size_t l) {
             return CsvCell::text(plan.groups[0].leaf() ? "-" : planner::to_string(plan.choices[0][l].type));
         }},
        {"compute_forward_s", phase(0)},
        {"compute_backward_data_s", phase(1)},
        {"compute_weight_gradient_s", phase(2)},
        {"compute_weight_update_s", phase(planner::kWeightUpdate)},
        {"forward_comm_s", seconds(plan.forward_comm_s)},
        {"backward_comm_s", seconds(plan.backward_comm_s)},
        {"sync_comm_s", seconds(plan.sync_comm_s)},
        {"planned_s", seconds(plan.layer_step_s)},
        {"simulated_s", seconds(r.layer_simulated_s)},
    });
    std::vector<std::size_t> layers(r.planned.graph.layers.size());
    std::iota(layers.begin(), layers.end(), std::size_t{0});
    return csv.table(layers);
}

std::string cluster_nodes_csv(const config::Params& params, const run::ClusterStepResult& r) {
    // One row per node (its id): time in seconds, energy in pJ, traffic in bytes.
    std::vector<CsvColumn<std::size_t>> columns{
        {"node", [](std::size_t i) { return CsvCell::integer(i); }},
        {"type",
         [&](std::size_t i) { return CsvCell::text(params.cluster.node_types[params.cluster.node_type[i]].name); }},
        {"compute_s", [&](std::size_t i) { return CsvCell::number(r.nodes[i].compute_s); }},
        {"compute_array_s",  // never below 0 by rounding: readers hold every time to be at least 0
         [&](std::size_t i) { return CsvCell::number(std::max(0.0, r.nodes[i].compute_s - r.nodes[i].vector_s)); }},
        {"compute_vector_s", [&](std::size_t i) { return CsvCell::number(r.nodes[i].vector_s); }},
        {"comm_wait_s", [&](std::size_t i) { return CsvCell::number(r.nodes[i].wait_s); }},
        {"idle_s", [&](std::size_t i) { return CsvCell::number(r.nodes[i].idle_s); }},
        {"macs", [&](std::size_t i) { return CsvCell::integer(r.nodes[i].counters.macs); }},
    };
    for (const energy::EnergyComponent& e : energy::kEnergyComponents)
        columns.push_back({"energy_" + std::string(e.name) + "_pj",
                           [&r, pj = e.pj](std::size_t i) { return CsvCell::number(r.nodes[i].energy.*pj); }});
    columns.push_back({"bytes_sent", [&](std::size_t i) { return CsvCell::integer(r.simulated.nodes[i].bytes_sent); }});
    columns.push_back(
        {"bytes_received", [&](std::size_t i) { return CsvCell::integer(r.simulated.nodes[i].bytes_received); }});
    std::vector<std::size_t> nodes(r.nodes.size());
    std::iota(nodes.begin(), nodes.end(), std::size_t{0});
    return CsvWriter<std::size_t>(std::move(columns)).table(nodes);
}

namespace {

constexpr std::size_t kDataParallel = 0, kDataParallelBalanced = 1;
static_assert(planner::kAllPlanners[kDataParallel] == planner::PlannerKind::data_parallel &&
              planner::kAllPlanners[kDataParallelBalanced] == planner::PlannerKind::data_parallel_balanced);

/// The baseline's step (or volume) over the planner's; nullopt where either could not plan.
std::optional<double> speedup(const run::ComparisonRow& row, std::size_t baseline, std::size_t k, bool comm_only) {
    const run::ComparisonCell& base = row.cells[baseline];
    const run::ComparisonCell& mine = row.cells[k];
    if (!base.error.empty() || !mine.error.empty()) return std::nullopt;
    const double b = comm_only ? base.comm_bytes : base.step_s(), m = comm_only ? mine.comm_bytes : mine.step_s();
    if (m <= 0 || b <= 0) return std::nullopt;
    return b / m;
}

std::optional<double> prediction_error(const run::ComparisonCell& cell) {
    if (!cell.error.empty() || !cell.simulated_step_s || *cell.simulated_step_s <= 0) return std::nullopt;
    return (cell.planned_step_s - *cell.simulated_step_s) / *cell.simulated_step_s;
}

/// One table: a row per network, a column per planner, and a geomean row over the networks.
void print_ratio_table(std::ostream& out, const std::vector<run::ComparisonRow>& rows,
                       const std::function<std::optional<double>(const run::ComparisonRow&, std::size_t)>& cell,
                       bool with_geomean, int decimals) {
    std::vector<std::string> headers{"network"};
    for (auto k : planner::kAllPlanners) headers.push_back(std::string(planner::to_string(k)));
    Table t(headers);
    std::vector<double> log_sum(planner::kAllPlanners.size(), 0);
    std::vector<std::size_t> counted(planner::kAllPlanners.size(), 0);
    for (const auto& row : rows) {
        std::vector<std::string> cells{row.network};
        for (std::size_t k = 0; k < planner::kAllPlanners.size(); ++k) {
            const std::optional<double> v = cell(row, k);
            if (!v) {
                cells.push_back(row.cells[k].error.empty() ? "-" : "n/a");
                continue;
            }
            cells.push_back(Table::fixed(*v, decimals));
            if (*v > 0) {
                log_sum[k] += std::log(*v);
                ++counted[k];
            }
        }
        t.add_row(cells);
    }
    if (with_geomean) {
        std::vector<std::string> gmean{"geomean"};
        for (std::size_t k = 0; k < planner::kAllPlanners.size(); ++k)
            gmean.push_back(counted[k] ? Table::fixed(std::exp(log_sum[k] / static_cast<double>(counted[k])), decimals)
                                       : "-");
        t.add_row(gmean);
    }
    t.print(out);
}

}  // namespace

void print_comparison(std::ostream& out, const std::vector<run::ComparisonRow>& rows, bool comm_only, bool simulated) {
    const std::string what = comm_only ? "communication volume of " : std::string("speedup over ");
    const std::string tail = comm_only ? " / planner (higher is better)"
                                       : std::string(", ") + (simulated ? "simulated" : "predicted") + " step time";
    for (const std::size_t baseline : {kDataParallel, kDataParallelBalanced}) {
        out << what << (baseline == kDataParallel ? "data parallelism" : "balanced data parallelism") << tail << "\n\n";
        print_ratio_table(
            out, rows,
            [&](const run::ComparisonRow& row, std::size_t k) { return speedup(row, baseline, k, comm_only); }, true,
            2);
        out << "\n";
    }
    if (simulated) {
        out << "prediction error, (planned - simulated) / simulated, percent\n\n";
        print_ratio_table(
            out, rows,
            [](const run::ComparisonRow& row, std::size_t k) -> std::optional<double> {
                const auto e = prediction_error(row.cells[k]);
                return e ? std::optional<double>(100 * *e) : std::nullopt;
            },
            false, 1);
        out << "\n";
    }
    for (const auto& row : rows)
        for (std::size_t k = 0; k < planner::kAllPlanners.size(); ++k) {
            const run::ComparisonCell& c = row.cells[k];
            const std::string who =
                row.network + ", " + std::string(planner::to_string(planner::kAllPlanners[k])) + ": ";
            if (!c.note.empty()) out << "note: " << who << c.note << "\n";
            if (!c.error.empty()) out << "n/a: " << who << c.error << "\n";
        }
}

std::string comparison_csv(const std::vector<run::ComparisonRow>& rows, bool comm_only) {
    /// One row per network and planner (its index in kAllPlanners).
    struct Row {
        const run::ComparisonRow& row;
        std::size_t planner;
        [[nodiscard]] const run::ComparisonCell& cell() const { return row.cells[planner]; }
        [[nodiscard]] bool ok() const { return cell().error.empty(); }
    };
    const auto optional_number = [](const std::optional<double>& v) {
        return v ? CsvCell::number(*v) : CsvCell::empty();
    };
    const CsvWriter<Row> csv({
        {"network", [](const Row& r) { return CsvCell::text(r.row.network); }},
        {"planner", [](const Row& r) { return CsvCell::text(planner::to_string(planner::kAllPlanners[r.planner])); }},
        {"step_s", [](const Row& r) { return r.ok() ? CsvCell::number(r.cell().step_s()) : CsvCell::empty(); }},
        {"planned_step_s",
         [](const Row& r) { return r.ok() ? CsvCell::number(r.cell().planned_step_s) : CsvCell::empty(); }},
        {"simulated_step_s",
         [&](const Row& r) { return r.ok() ? optional_number(r.cell().simulated_step_s) : CsvCell::empty(); }},
        {"prediction_error", [&](const Row& r) { return optional_number(prediction_error(r.cell())); }},
        {"comm_bytes",
         [](const Row& r) {
             return r.ok() ? CsvCell::integer(static_cast<long long>(std::llround(r.cell().comm_bytes)))
                           : CsvCell::empty();
         }},
        {"speedup_over_data_parallel",
         [&](const Row& r) { return optional_number(speedup(r.row, kDataParallel, r.planner, comm_only)); }},
        {"speedup_over_data_parallel_balanced",
         [&](const Row& r) { return optional_number(speedup(r.row, kDataParallelBalanced, r.planner, comm_only)); }},
        {"note", [](const Row& r) { return CsvCell::quoted_text(r.cell().note); }},
        {"error", [](const Row& r) { return CsvCell::quoted_text(r.cell().error); }},
    });
    std::vector<Row> table;
    for (const auto& row : rows)
        for (std::size_t k = 0; k < planner::kAllPlanners.size(); ++k) table.push_back(Row{row, k});
    return csv.table(table);
}

}  // namespace fastsim::output
