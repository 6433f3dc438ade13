// SPDX-License-Identifier: MIT
#include "output/cluster_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "common/output_files.h"
#include "common/units.h"
#include "planner/plan_view.h"
#include "output/table.h"

namespace fastsim::output {
namespace {

double ms(double s) { return s * 1e3; }

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
    for (std::size_t g = 0; g < c.groups.size(); ++g)
        out << (g ? ", " : "") << c.groups[g].count << " x " << c.groups[g].node_type << " on a "
            << config::to_string(c.groups[g].topology) << " at " << c.groups[g].link.bandwidth_gb_per_s << " GB/s";
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
        const double compute = plan.compute_s[l][0] + plan.compute_s[l][1] + plan.compute_s[l][2];
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
        compute += plan.compute_s[l][0] + plan.compute_s[l][1] + plan.compute_s[l][2];
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

/// A plan's groups as plan.json lists them: each with its nodes and, unless a leaf, its
/// children and per layer the type, alpha, split_a and the planner's compute estimates.
void write_plan_groups(std::ostream& j, const planner::Plan& plan, const std::string& indent) {
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        const auto& group = plan.groups[g];
        j << indent << "{\"id\": " << g << ", \"depth\": " << group.depth << ", \"nodes\": [";
        for (std::size_t i = 0; i < group.nodes.size(); ++i) j << (i ? ", " : "") << group.nodes[i];
        j << "]";
        if (!group.leaf()) {
            const auto& choices = plan.choices[g];
            const auto list = [&](const char* key, const auto& field) {
                j << ", \"" << key << "\": [";
                for (std::size_t l = 0; l < choices.size(); ++l) j << (l ? ", " : "") << field(choices[l]);
                j << "]";
            };
            j << ", \"side_a\": " << group.side_a << ", \"side_b\": " << group.side_b;
            list("types", [](const planner::LayerChoice& c) { return json_string(planner::to_string(c.type)); });
            list("alpha", [](const planner::LayerChoice& c) { return format_number(c.alpha); });
            list("split_a", [](const planner::LayerChoice& c) { return std::to_string(c.split_a); });
            list("compute_a_s", [](const planner::LayerChoice& c) { return format_number(c.compute_a_s); });
            list("compute_b_s", [](const planner::LayerChoice& c) { return format_number(c.compute_b_s); });
        }
        j << "}" << (g + 1 < plan.groups.size() ? "," : "") << "\n";
    }
}

std::string plan_json(const config::Params& params, const run::ClusterPlan& planned) {
    const planner::Plan& plan = planned.plan;
    std::ostringstream j;
    j << "{\n  \"config\": " << json_string(params.source_file)
      << ",\n  \"network\": " << json_string(params.workload.network.name)
      << ",\n  \"batch\": " << params.workload.batch << ",\n  \"nodes\": " << params.cluster.node_type.size()
      << ",\n  \"planner\": " << json_string(std::string(planner::to_string(plan.options.kind)))
      << ",\n  \"objective\": " << json_string(std::string(name_of(plan.objective)))
      << ",\n  \"split\": " << json_string(std::string(name_of(plan.split)))
      << ",\n  \"chosen_from\": " << json_string(std::string(planner::to_string(plan.chosen_from)))
      << ",\n  \"comm_only\": " << (plan.options.comm_only ? "true" : "false")
      << ",\n  \"equal_split\": " << (plan.options.equal_split ? "true" : "false") << ",\n  \"node_types\": [";
    for (std::size_t n = 0; n < params.cluster.node_type.size(); ++n)
        j << (n ? ", " : "") << json_string(params.cluster.node_types[params.cluster.node_type[n]].name);
    j << "],\n  \"predicted_step_s\": " << format_number(plan.step_s)
      << ",\n  \"comm_bytes\": " << format_number(plan.comm_bytes)
      << ",\n  \"planning_s\": " << format_number(planned.planning_s) << ",\n  \"layers\": [\n";
    for (std::size_t l = 0; l < planned.graph.layers.size(); ++l) {
        j << "    {\"name\": " << json_string(planned.graph.layers[l].name) << ", \"compute_s\": ["
          << format_number(plan.compute_s[l][0]) << ", " << format_number(plan.compute_s[l][1]) << ", "
          << format_number(plan.compute_s[l][2]) << "], \"forward_comm_s\": " << format_number(plan.forward_comm_s[l])
          << ", \"backward_comm_s\": " << format_number(plan.backward_comm_s[l])
          << ", \"sync_comm_s\": " << format_number(plan.sync_comm_s[l])
          << ", \"predicted_s\": " << format_number(plan.layer_step_s[l]) << "}"
          << (l + 1 < planned.graph.layers.size() ? "," : "") << "\n";
    }
    j << "  ],\n";
    struct PipelineJson : planner::PlanVisitor {
        std::ostream& j;
        const planner::Plan& plan;
        const planner::LayerGraph& graph;
        PipelineJson(std::ostream& o, const planner::Plan& pl, const planner::LayerGraph& g)
            : j(o), plan(pl), graph(g) {}
        void pipeline(const planner::PipelinePlan& p) override {
            j << "  \"pipeline\": {\"schedule\": " << json_string(std::string(name_of(p.schedule)))
              << ", \"intra\": " << json_string(std::string(planner::to_string(plan.options.pipeline.intra)))
              << ", \"microbatches\": " << p.microbatches << ", \"microbatch_size\": " << p.microbatch_size
              << ", \"bubble_fraction\": " << format_number(p.bubble_fraction)
              << ", \"predicted_step_s\": " << format_number(p.step_s);
            if (p.objective_s > 0) j << ", \"alpa_objective_s\": " << format_number(p.objective_s);
            j << ", \"stages\": [\n";
            for (std::size_t s = 0; s < p.stages.size(); ++s) {
                const planner::PipelineStage& st = p.stages[s];
                j << "    {\"layers\": [";
                for (std::size_t l = st.first_layer; l < st.end_layer; ++l)
                    j << (l > st.first_layer ? ", " : "") << json_string(graph.layers[l].name);
                j << "], \"nodes\": [";
                for (std::size_t i = 0; i < st.nodes.size(); ++i) j << (i ? ", " : "") << st.nodes[i];
                j << "], \"predicted_s\": " << format_number(st.busy_s)
                  << ", \"microbatch_forward_s\": " << format_number(st.forward_s)
                  << ", \"microbatch_backward_s\": " << format_number(st.backward_s)
                  << ", \"sync_tail_s\": " << format_number(st.sync_tail_s) << ", \"in_flight\": " << st.in_flight
                  << ", \"memory_bytes\": " << std::llround(st.memory_bytes)
                  << ", \"intra_planner\": " << json_string(std::string(planner::to_string(st.plan.chosen_from)))
                  << ", \"objective\": " << json_string(std::string(name_of(st.plan.objective)))
                  << ", \"split\": " << json_string(std::string(name_of(st.plan.split))) << ", \"groups\": [\n";
                write_plan_groups(j, st.plan, "      ");
                j << "    ]}" << (s + 1 < p.stages.size() ? "," : "") << "\n";
            }
            j << "  ]},\n";
        }
    } pipeline_json(j, plan, planned.graph);
    planner::describe(plan, planned.graph, pipeline_json);
    j << "  \"groups\": [\n";
    write_plan_groups(j, plan, "    ");
    j << "  ],\n  \"memory\": [\n";
    for (std::size_t n = 0; n < plan.footprint.size(); ++n) {
        const planner::Footprint& f = plan.footprint[n];
        const config::NodeTypeParams& t = params.cluster.node_types[params.cluster.node_type[n]];
        j << "    {\"node\": " << n << ", \"memory_bytes\": " << std::llround(f.total())
          << ", \"capacity_bytes\": " << std::llround(t.dram_capacity_gib * 0x1p30)
          << ", \"weights_bytes\": " << std::llround(f.weights)
          << ", \"weight_gradients_bytes\": " << std::llround(f.weight_gradients)
          << ", \"optimizer_state_bytes\": " << std::llround(f.optimizer_state)
          << ", \"stashed_activations_bytes\": " << std::llround(f.stashed_activations)
          << ", \"buffers_bytes\": " << std::llround(f.buffers) << "}" << (n + 1 < plan.footprint.size() ? "," : "")
          << "\n";
    }
    j << "  ]\n}\n";
    return j.str();
}

/// plan.csv's rows of `plan` over `graph`: a row per layer and non-leaf group; a plan whose
/// whole set of nodes is one leaf (one node) gets a row per layer of type "-", its node's compute.
/// `stage` and `stage_nodes` fill the last two columns (empty outside a pipeline).
void write_plan_rows(std::ostream& c, const planner::Plan& plan, const planner::LayerGraph& graph,
                     const std::string& stage, const std::string& stage_nodes) {
    const std::string tail = "," + stage + "," + stage_nodes + "\n";
    if (plan.groups.front().leaf()) {
        for (std::size_t l = 0; l < graph.layers.size(); ++l) {
            const planner::LayerDims& d = graph.layers[l].dims;
            const planner::PhaseSeconds& t = plan.compute_s[l];
            c << "0,0,1,0," << graph.layers[l].name << ",-,1,," << d.batch << ',' << d.in_channels << ','
              << d.out_channels << ',' << format_number(t[0] + t[1] + t[2]) << ",0,0,0,0,0" << tail;
        }
        return;
    }
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        const auto& group = plan.groups[g];
        if (group.leaf()) continue;
        const std::size_t side_a = plan.groups[static_cast<std::size_t>(group.side_a)].nodes.size();
        for (std::size_t l = 0; l < plan.choices[g].size(); ++l) {
            const planner::LayerChoice& ch = plan.choices[g][l];
            c << g << ',' << group.depth << ',' << group.nodes.size() << ',' << side_a << ',' << graph.layers[l].name
              << ',' << planner::to_string(ch.type) << ',' << format_number(ch.alpha) << ',' << ch.split_a << ','
              << ch.dims.batch << ',' << ch.dims.in_channels << ',' << ch.dims.out_channels << ','
              << format_number(ch.compute_a_s) << ',' << format_number(ch.compute_b_s) << ','
              << format_number(ch.forward_comm_s(group.exchange)) << ','
              << format_number(ch.backward_comm_s(group.exchange)) << ','
              << format_number(ch.sync_comm_s(group.exchange)) << ',' << format_number(ch.comm_bytes()) << tail;
        }
    }
}

std::string plan_csv(const config::Params&, const run::ClusterPlan& planned) {
    const planner::Plan& plan = planned.plan;
    std::ostringstream c;
    c << "group,depth,nodes,side_a_nodes,layer,type,alpha,split_a,batch,in_channels,out_channels,compute_a_s,"
         "compute_b_s,forward_comm_s,backward_comm_s,sync_comm_s,comm_bytes,stage,stage_nodes\n";
    planner::for_each_part(plan, planned.graph, [&](const planner::PlanPart& part) {
        std::string nodes = part.stage ? node_list(part.nodes) : "";
        if (nodes.find(',') != std::string::npos) nodes = '"' + nodes + '"';
        write_plan_rows(c, part.plan, part.graph, part.stage ? std::to_string(*part.stage) : "", nodes);
    });
    return c.str();
}

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
    Table n({"node", "type", "compute_ms", "comm_wait_ms", "idle_ms", "busy_percent", "energy_uj"});
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const auto& node = r.nodes[i];
        n.add_row({std::to_string(i), params.cluster.node_types[params.cluster.node_type[i]].name,
                   Table::fixed(ms(node.compute_s), 3), Table::fixed(ms(node.wait_s), 3),
                   Table::fixed(ms(node.idle_s), 3),
                   Table::fixed(r.step_s > 0 ? 100 * node.compute_s / r.step_s : 0, 1),
                   Table::fixed(node.energy.total_pj() * 1e-6, 1)});
    }
    n.print(out);
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
        << "\n"
        << "simulated " << r.ops << " ops in " << Table::fixed(r.simulation_s * 1e3, 1) << " ms; planned in "
        << Table::fixed(r.planned.planning_s * 1e3, 1) << " ms\n";
}

std::string cluster_step_json(const config::Params& params, const run::ClusterStepResult& r,
                              const run::RunProvenance& provenance) {
    const auto& e = r.compute_energy;
    std::ostringstream j;
    j << "{\n  \"config\": " << json_string(params.source_file)
      << ",\n  \"fastsim_version\": " << json_string(provenance.fastsim_version)
      << ",\n  \"command_line\": " << json_string(provenance.command_line)
      << ",\n  \"network\": " << json_string(params.workload.network.name)
      << ",\n  \"batch\": " << params.workload.batch << ",\n  \"nodes\": " << r.nodes.size()
      << ",\n  \"planner\": " << json_string(std::string(planner::to_string(r.planned.plan.options.kind)))
      << ",\n  \"simulated_step_s\": " << format_number(r.step_s)
      << ",\n  \"planned_step_s\": " << format_number(r.planned.plan.step_s)
      << ",\n  \"comm_bytes_planned\": " << format_number(r.planned.plan.comm_bytes)
      << ",\n  \"sync_bytes\": " << r.sync_bytes << ",\n  \"sync_bytes_uncompressed\": " << r.sync_bytes_uncompressed
      << ",\n  \"exposed_sync_s\": " << format_number(r.exposed_sync_s)
      << ",\n  \"staleness_overlap_s\": " << format_number(r.staleness_overlap_s) << ",\n  \"energy_pj\": {";
    for (const energy::EnergyComponent& c : energy::kEnergyComponents)
        j << (c.pj == energy::kEnergyComponents.front().pj ? "\"" : ", \"") << c.name
          << "\": " << format_number(e.*c.pj);
    j << ", \"links\": " << format_number(r.link_energy_pj)
      << ", \"compression\": " << format_number(r.compression_energy_pj)
      << ", \"total\": " << format_number(e.total_pj() + r.link_energy_pj + r.compression_energy_pj) << "},\n";
    struct PipelineJson : planner::PlanVisitor {
        std::ostream& j;
        const run::ClusterStepResult& r;
        PipelineJson(std::ostream& o, const run::ClusterStepResult& res) : j(o), r(res) {}
        void pipeline(const planner::PipelinePlan& p) override {
            j << "  \"pipeline\": {\"schedule\": " << json_string(std::string(name_of(p.schedule)))
              << ", \"microbatches\": " << p.microbatches
              << ", \"bubble_fraction\": " << format_number(r.bubble_fraction)
              << ", \"planned_bubble_fraction\": " << format_number(p.bubble_fraction) << ", \"stages\": [";
            for (std::size_t s = 0; s < r.stages.size(); ++s)
                j << (s ? ", " : "") << "{\"busy_s\": " << format_number(r.stages[s].busy_s)
                  << ", \"idle_s\": " << format_number(r.stages[s].idle_s)
                  << ", \"planned_busy_s\": " << format_number(p.stages[s].busy_s) << "}";
            j << "]},\n";
        }
    } pipeline_json(j, r);
    planner::describe(r.planned.plan, r.planned.graph, pipeline_json);
    if (params.workload.steps > 1) {
        const double energy_pj = e.total_pj() + r.link_energy_pj + r.compression_energy_pj;
        j << "  \"whole_run\": {\"steps\": " << params.workload.steps
          << ", \"total_seconds\": " << format_number(r.step_s * static_cast<double>(params.workload.steps))
          << ", \"total_energy_pj\": " << format_number(energy_pj * static_cast<double>(params.workload.steps))
          << "},\n";
    }
    j << "  \"links\": [\n";
    const auto& channels = params.cluster.topology->channels();
    for (std::size_t c = 0; c < r.simulated.channels.size(); ++c) {
        const auto& s = r.simulated.channels[c];
        j << "    {\"from\": " << channels[c].from << ", \"to\": " << channels[c].to << ", \"bytes\": " << s.bytes
          << ", \"busy_s\": " << format_number(to_seconds(s.busy_ps))
          << ", \"utilisation\": " << format_number(utilisation(s.busy_ps, r.simulated.end_ps)) << "}"
          << (c + 1 < r.simulated.channels.size() ? "," : "") << "\n";
    }
    j << "  ]\n}\n";
    return j.str();
}

std::string cluster_layers_csv(const config::Params&, const run::ClusterStepResult& r) {
    const planner::Plan& plan = r.planned.plan;
    std::ostringstream c;
    c << "layer,type_root,compute_forward_s,compute_backward_data_s,compute_weight_gradient_s,forward_comm_s,"
         "backward_comm_s,sync_comm_s,planned_s,simulated_s\n";
    for (std::size_t l = 0; l < r.planned.graph.layers.size(); ++l)
        c << r.planned.graph.layers[l].name << ','
          << (plan.groups[0].leaf() ? "-" : planner::to_string(plan.choices[0][l].type)) << ','
          << format_number(plan.compute_s[l][0]) << ',' << format_number(plan.compute_s[l][1]) << ','
          << format_number(plan.compute_s[l][2]) << ',' << format_number(plan.forward_comm_s[l]) << ','
          << format_number(plan.backward_comm_s[l]) << ',' << format_number(plan.sync_comm_s[l]) << ','
          << format_number(plan.layer_step_s[l]) << ',' << format_number(r.layer_simulated_s[l]) << '\n';
    return c.str();
}

std::string cluster_nodes_csv(const config::Params& params, const run::ClusterStepResult& r) {
    std::ostringstream c;
    c << "node,type,compute_s,comm_wait_s,idle_s,macs";
    for (const energy::EnergyComponent& e : energy::kEnergyComponents) c << ",energy_" << e.name << "_pj";
    c << ",bytes_sent,bytes_received\n";
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const auto& n = r.nodes[i];
        const auto& s = r.simulated.nodes[i];
        c << i << ',' << params.cluster.node_types[params.cluster.node_type[i]].name << ','
          << format_number(n.compute_s) << ',' << format_number(n.wait_s) << ',' << format_number(n.idle_s) << ','
          << n.counters.macs;
        for (const energy::EnergyComponent& e : energy::kEnergyComponents) c << ',' << format_number(n.energy.*e.pj);
        c << ',' << s.bytes_sent << ',' << s.bytes_received << '\n';
    }
    return c.str();
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
    const auto optional_number = [](const std::optional<double>& v) { return v ? format_number(*v) : std::string(); };
    std::ostringstream c;
    c << "network,planner,step_s,planned_step_s,simulated_step_s,prediction_error,comm_bytes,speedup_over_data_"
         "parallel,"
         "speedup_over_data_parallel_balanced,note,error\n";
    for (const auto& row : rows)
        for (std::size_t k = 0; k < planner::kAllPlanners.size(); ++k) {
            const run::ComparisonCell& cell = row.cells[k];
            const bool ok = cell.error.empty();
            c << row.network << ',' << planner::to_string(planner::kAllPlanners[k]) << ','
              << (ok ? format_number(cell.step_s()) : "") << ',' << (ok ? format_number(cell.planned_step_s) : "")
              << ',' << (ok ? optional_number(cell.simulated_step_s) : "") << ','
              << optional_number(prediction_error(cell)) << ','
              << (ok ? std::to_string(std::llround(cell.comm_bytes)) : "") << ','
              << optional_number(speedup(row, kDataParallel, k, comm_only)) << ','
              << optional_number(speedup(row, kDataParallelBalanced, k, comm_only)) << ',' << json_string(cell.note)
              << ',' << json_string(cell.error) << '\n';
        }
    return c.str();
}

}  // namespace fastsim::output
