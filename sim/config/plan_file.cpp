// SPDX-License-Identifier: MIT
#include "config/plan_file.h"

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "common/errors.h"
#include "common/json_reader.h"
#include "common/output_files.h"
#include "planner/plan_view.h"

namespace fastsim::config {
namespace {

/// One plan file being read: its path, for errors, and what it is checked against.
class PlanReader {
public:
    PlanReader(std::string path, const planner::LayerGraph& graph, const ClusterParams& cluster)
        : m_path(std::move(path)), m_graph(graph), m_cluster(cluster) {}

    planner::PlanDecisions read(const JsonValue& root) const;

private:
    [[noreturn]] void fail(const std::string& entry, const std::string& what) const {
        throw UserError(m_path + ": " + entry + ": " + what);
    }
    /// UserError for a member of `object` (at `entry`) not in `known`.
    void only(const JsonValue& object, const std::string& entry, std::initializer_list<std::string_view> known) const;
    const JsonValue& member(const JsonValue& object, const std::string& entry, std::string_view key,
                            JsonValue::Kind kind) const;
    const JsonValue* optional(const JsonValue& object, const std::string& entry, std::string_view key,
                              JsonValue::Kind kind) const;
    std::uint64_t whole(const JsonValue& v, const std::string& entry) const;
    /// What the run measured (seconds, bytes, counts) is not read back, but each of `keys` that
    /// `object` has must be a finite number of at least 0 (or a list of them), as plan.json has.
    void measured(const JsonValue& object, const std::string& entry, std::initializer_list<const char*> keys) const;
    template <class Enum>
    Enum name(const JsonValue& v, const std::string& entry, const char* expected) const {
        const std::optional<Enum> e = parse_name<Enum>(v.as_string());
        if (!e) fail(entry, "'" + v.as_string() + "' is not " + expected);
        return *e;
    }
    /// The index of layer `name`, the one at `entry`.
    std::size_t layer_index(const std::string& name, const std::string& entry) const;
    /// A hierarchy plan's groups and labels: `groups` of `holder` (at `entry`).
    planner::HierarchyDecisions hierarchy(const JsonValue& holder, const std::string& entry,
                                          const planner::PlannerOptions& options) const;
    planner::PipelineDecisions pipeline(const JsonValue& p, const planner::PlannerOptions& options) const;

    std::string m_path;
    const planner::LayerGraph& m_graph;
    const ClusterParams& m_cluster;
};

const char* kind_name(JsonValue::Kind kind) {
    switch (kind) {
    case JsonValue::Kind::null: return "null";
    case JsonValue::Kind::boolean: return "true or false";
    case JsonValue::Kind::number: return "a number";
    case JsonValue::Kind::string: return "a string";
    case JsonValue::Kind::array: return "a list";
    case JsonValue::Kind::object: return "an object";
    }
    return "a value";
}

void PlanReader::only(const JsonValue& object, const std::string& entry,
                      std::initializer_list<std::string_view> known) const {
    for (const JsonMember& m : object.members()) {
        bool found = false;
        for (const std::string_view k : known) found = found || m.key == k;
        if (!found) fail(entry.empty() ? m.key : entry + "." + m.key, "not a plan key here");
    }
}

const JsonValue* PlanReader::optional(const JsonValue& object, const std::string& entry, std::string_view key,
                                      JsonValue::Kind kind) const {
    const JsonValue* v = object.find(key);
    const std::string at = entry.empty() ? std::string(key) : entry + "." + std::string(key);
    if (v && v->kind() != kind) fail(at, std::string("expected ") + kind_name(kind));
    return v;
}

const JsonValue& PlanReader::member(const JsonValue& object, const std::string& entry, std::string_view key,
                                    JsonValue::Kind kind) const {
    const JsonValue* v = optional(object, entry, key, kind);
    if (!v)
        fail(entry.empty() ? std::string(key) : entry + "." + std::string(key),
             std::string("missing; expected ") + kind_name(kind));
    return *v;
}

std::uint64_t PlanReader::whole(const JsonValue& v, const std::string& entry) const {
    const double x = v.as_number();
    if (!v.is_number() || !(x >= 0) || x > 9007199254740992.0 || x != std::trunc(x))
        fail(entry,
             "expected a whole number from 0 to 2^53" + (v.is_number() ? ", got " + format_number(x) : std::string()));
    return static_cast<std::uint64_t>(x);
}

void PlanReader::measured(const JsonValue& o, const std::string& at, std::initializer_list<const char*> keys) const {
    for (const char* key : keys)
        if (const JsonValue* v = o.find(key))
            for (const JsonValue& x : v->is_array() ? v->items() : std::vector<JsonValue>{*v})
                if (!x.is_number() || !std::isfinite(x.as_number()) || x.as_number() < 0)
                    fail(at.empty() ? key : at + "." + key, "expected a finite number of at least 0");
}

std::size_t PlanReader::layer_index(const std::string& name, const std::string& entry) const {
    for (std::size_t l = 0; l < m_graph.layers.size(); ++l)
        if (m_graph.layers[l].name == name) return l;
    fail(entry, "'" + name + "' is no GEMM layer of the config's network");
}

planner::HierarchyDecisions PlanReader::hierarchy(const JsonValue& holder, const std::string& entry,
                                                  const planner::PlannerOptions& options) const {
    planner::HierarchyDecisions h;
    const std::string prefix = entry.empty() ? "" : entry + ".";
    h.chosen_from = options.kind;
    h.objective = planner::objective_of(options);
    h.split = planner::split_of(options);
    const char* from_key = entry.empty() ? "chosen_from" : "intra_planner";
    if (const JsonValue* v = optional(holder, entry, from_key, JsonValue::Kind::string)) {
        h.chosen_from = name<planner::PlannerKind>(*v, prefix + from_key, "a planner");
        // A whole plan may be a pipeline planner's (the top level of accpar's that kept one,
        // checked against its stages below); a stage is never split by one.
        if (planner::is_pipeline(h.chosen_from) && !planner::is_pipeline(options.kind) && !entry.empty())
            fail(prefix + from_key,
                 "'" + v->as_string() + "' is a pipeline planner; a stage is split by an intra-layer one");
    }
    if (const JsonValue* v = optional(holder, entry, "objective", JsonValue::Kind::string))
        h.objective = name<planner::Objective>(*v, prefix + "objective", "time or comm_volume");
    if (const JsonValue* v = optional(holder, entry, "split", JsonValue::Kind::string))
        h.split = name<planner::SplitRule>(*v, prefix + "split", "balanced or equal");
    const std::size_t layers = m_graph.layers.size();
    const auto& groups = member(holder, entry, "groups", JsonValue::Kind::array).items();
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const std::string at = prefix + "groups[" + std::to_string(g) + "]";
        const JsonValue& group = groups[g];
        if (!group.is_object()) fail(at, "expected an object");
        only(group, at,
             {"id", "depth", "nodes", "side_a", "side_b", "types", "alpha", "split_a", "compute_a_s", "compute_b_s"});
        if (const JsonValue* id = optional(group, at, "id", JsonValue::Kind::number); id && whole(*id, at + ".id") != g)
            fail(at + ".id", "expected " + std::to_string(g) + ", the group's place in the list");
        std::vector<std::size_t> nodes;
        for (const JsonValue& n : member(group, at, "nodes", JsonValue::Kind::array).items())
            nodes.push_back(static_cast<std::size_t>(whole(n, at + ".nodes")));
        if (nodes.empty()) fail(at + ".nodes", "lists no node");
        h.group_nodes.push_back(std::move(nodes));
        planner::GroupShape shape;
        const auto shape_field = [&](const char* key) -> std::optional<std::size_t> {
            const JsonValue* v = optional(group, at, key, JsonValue::Kind::number);
            if (!v) return std::nullopt;
            return static_cast<std::size_t>(whole(*v, at + "." + key));
        };
        shape.depth = shape_field("depth");
        shape.side_a = shape_field("side_a");
        shape.side_b = shape_field("side_b");
        h.group_shapes.push_back(shape);
        std::vector<planner::LayerDecision> choices;
        const JsonValue* types = optional(group, at, "types", JsonValue::Kind::array);
        if (types) {
            const auto list = [&](const char* key) -> const std::vector<JsonValue>* {
                const JsonValue* v = optional(group, at, key, JsonValue::Kind::array);
                if (v && v->items().size() != types->items().size())
                    fail(at + "." + key, "lists " + std::to_string(v->items().size()) + " entries; types lists " +
                                             std::to_string(types->items().size()));
                return v ? &v->items() : nullptr;
            };
            if (types->items().size() != layers)
                fail(
                    at + ".types",
                    "lists " + std::to_string(types->items().size()) + " layers; " +
                        (entry.empty() ? "the network has " + std::to_string(layers) + " (one per entry of layers)"
                                       : "the stage has " + std::to_string(layers) + " (one per entry of its layers)"));
            const auto* alpha = list("alpha");
            const auto* split_a = list("split_a");
            const auto* compute_a = list("compute_a_s");
            const auto* compute_b = list("compute_b_s");
            if (!alpha && !split_a) fail(at, "gives types but neither split_a nor alpha: each layer's split");
            for (std::size_t l = 0; l < layers; ++l) {
                const std::string el = "[" + std::to_string(l) + "] (layer '" + m_graph.layers[l].name + "')";
                planner::LayerDecision d;
                const JsonValue& t = types->items()[l];
                if (!t.is_string()) fail(at + ".types" + el, "expected a string: I, II, III or IV");
                bool known = false;
                for (std::size_t k = 0; k < planner::kPartitionTypes; ++k)
                    if (t.as_string() == planner::to_string(static_cast<planner::PartitionType>(k))) {
                        d.type = static_cast<planner::PartitionType>(k);
                        known = true;
                    }
                if (!known)
                    fail(at + ".types" + el, "'" + t.as_string() + "' is not a partition type: I, II, III or IV");
                if (split_a) {
                    d.split_a = whole((*split_a)[l], at + ".split_a" + el);
                    if (d.split_a == 0) fail(at + ".split_a" + el, "expected at least 1: side A's part of the split");
                }
                const auto number = [&](const std::vector<JsonValue>* from, const char* key) -> std::optional<double> {
                    if (!from) return std::nullopt;
                    if (!(*from)[l].is_number()) fail(at + "." + key + el, "expected a number");
                    const double x = (*from)[l].as_number();
                    if (std::string_view(key) != "alpha" && !(x >= 0 && std::isfinite(x)))
                        fail(at + "." + key + el, "expected seconds, at least 0, got " + format_number(x));
                    return x;
                };
                d.alpha = number(alpha, "alpha");
                d.compute_a_s = number(compute_a, "compute_a_s");
                d.compute_b_s = number(compute_b, "compute_b_s");
                choices.push_back(d);
            }
        }
        h.groups.push_back(std::move(choices));
    }
    return h;
}

planner::PipelineDecisions PlanReader::pipeline(const JsonValue& p, const planner::PlannerOptions& options) const {
    planner::PlannerOptions intra = options;
    intra.kind = options.pipeline.intra;
    only(p, "pipeline",
         {"schedule", "intra", "microbatches", "microbatch_size", "bubble_fraction", "predicted_step_s",
          "alpa_objective_s", "stages"});
    planner::PipelineDecisions d;
    d.schedule = name<planner::PipelineSchedule>(member(p, "pipeline", "schedule", JsonValue::Kind::string),
                                                 "pipeline.schedule", "a pipeline schedule: gpipe or 1f1b");
    d.microbatches = static_cast<std::size_t>(
        whole(member(p, "pipeline", "microbatches", JsonValue::Kind::number), "pipeline.microbatches"));
    measured(p, "pipeline", {"predicted_step_s", "bubble_fraction", "microbatch_size", "alpa_objective_s"});
    const std::uint64_t batch = m_graph.layers.front().dims.batch;
    if (const JsonValue* size = p.find("microbatch_size");
        size && d.microbatches > 0 && size->as_number() != double(batch / d.microbatches))
        fail("pipeline.microbatch_size", "expected batch / microbatches, " + std::to_string(batch / d.microbatches));
    if (const JsonValue* v = optional(p, "pipeline", "alpa_objective_s", JsonValue::Kind::number))
        d.objective_s = v->as_number();
    const auto& stages = member(p, "pipeline", "stages", JsonValue::Kind::array).items();
    for (std::size_t s = 0; s < stages.size(); ++s) {
        const std::string at = "pipeline.stages[" + std::to_string(s) + "]";
        const JsonValue& stage = stages[s];
        if (!stage.is_object()) fail(at, "expected an object");
        only(stage, at,
             {"layers", "nodes", "predicted_s", "microbatch_forward_s", "microbatch_backward_s", "sync_tail_s",
              "in_flight", "memory_bytes", "intra_planner", "objective", "split", "groups"});
        measured(stage, at,
                 {"predicted_s", "microbatch_forward_s", "microbatch_backward_s", "sync_tail_s", "in_flight",
                  "memory_bytes"});
        if (const JsonValue* f = stage.find("in_flight");
            f && !(f->as_number() >= 1 && f->as_number() <= double(d.microbatches)))
            fail(at + ".in_flight", "expected 1 to pipeline.microbatches (" + std::to_string(d.microbatches) + ")");
        planner::StageDecisions st;
        const auto& names = member(stage, at, "layers", JsonValue::Kind::array).items();
        if (names.empty()) fail(at + ".layers", "lists no layer");
        for (std::size_t i = 0; i < names.size(); ++i) {
            const std::string el = at + ".layers[" + std::to_string(i) + "]";
            if (!names[i].is_string()) fail(el, "expected a layer name");
            const std::size_t l = layer_index(names[i].as_string(), el);
            if (i == 0)
                st.first_layer = l;
            else if (l != st.first_layer + i)
                fail(el, "'" + names[i].as_string() + "' does not follow '" + names[i - 1].as_string() +
                             "' in the network: a stage runs consecutive layers, in the trace's order");
        }
        st.end_layer = st.first_layer + names.size();
        for (const JsonValue& n : member(stage, at, "nodes", JsonValue::Kind::array).items())
            st.nodes.push_back(static_cast<std::size_t>(whole(n, at + ".nodes")));
        // The stage's groups split the stage's layers only: read them against its own graph.
        const planner::LayerGraph stage_graph =
            planner::stage_graph(m_graph, st.first_layer, st.end_layer, m_graph.layers.front().dims.batch);
        st.intra = PlanReader(m_path, stage_graph, m_cluster).hierarchy(stage, at, intra);
        // AccPar's stage plan may be one of the plans it weighs (data parallelism, ...), and alpa
        // weighs one stage of the whole cluster split by data parallelism; any other planner's
        // stage plan is its own.
        const bool alpa_data_parallel =
            options.kind == planner::PlannerKind::alpa && st.intra.chosen_from == planner::PlannerKind::data_parallel;
        if (intra.kind != planner::PlannerKind::accpar && !alpa_data_parallel && st.intra.chosen_from != intra.kind)
            fail(at + ".intra_planner", "'" + std::string(planner::to_string(st.intra.chosen_from)) +
                                            "', but pipeline.intra is '" + std::string(planner::to_string(intra.kind)) +
                                            "', whose stage plans are its own: make them agree");
        d.stages.push_back(std::move(st));
    }
    return d;
}

planner::PlanDecisions PlanReader::read(const JsonValue& root) const {
    if (!root.is_object()) fail("(top level)", "expected an object, as fastsim plan writes plan.json");
    only(root, "",
         {"config", "network", "batch", "nodes", "planner", "objective", "split", "chosen_from", "comm_only",
          "equal_split", "node_types", "predicted_step_s", "comm_bytes", "planning_s", "layers", "pipeline", "groups",
          "memory", "all_reduces"});
    measured(root, "", {"predicted_step_s", "comm_bytes", "planning_s"});
    const std::size_t nodes = m_cluster.node_type.size();
    if (const std::uint64_t n = whole(member(root, "", "nodes", JsonValue::Kind::number), "nodes"); n != nodes)
        fail("nodes",
             "the plan is for " + std::to_string(n) + " nodes; the config's cluster has " + std::to_string(nodes));
    if (const JsonValue* types = optional(root, "", "node_types", JsonValue::Kind::array)) {
        if (types->items().size() != nodes)
            fail("node_types",
                 "lists " + std::to_string(types->items().size()) + " nodes; the cluster has " + std::to_string(nodes));
        for (std::size_t n = 0; n < nodes; ++n) {
            const std::string& expected = m_cluster.node_types[m_cluster.node_type[n]].name;
            if (!types->items()[n].is_string())
                fail("node_types[" + std::to_string(n) + "]",
                     "expected the name of a node type, as '" + expected + "'");
            if (types->items()[n].as_string() != expected)
                fail("node_types[" + std::to_string(n) + "]", "the plan has a '" + types->items()[n].as_string() +
                                                                  "' where the config's cluster has a '" + expected +
                                                                  "'");
        }
    }
    const std::uint64_t batch = m_graph.layers.front().dims.batch;
    if (const JsonValue* b = optional(root, "", "batch", JsonValue::Kind::number); b && whole(*b, "batch") != batch)
        fail("batch", "the plan is for batch " + format_number(b->as_number()) + "; the config's workload.batch is " +
                          std::to_string(batch));
    const auto& layers = member(root, "", "layers", JsonValue::Kind::array).items();
    if (layers.size() != m_graph.layers.size())
        fail("layers", "lists " + std::to_string(layers.size()) + " layers; the config's network has " +
                           std::to_string(m_graph.layers.size()) + " GEMM layers");
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const std::string at = "layers[" + std::to_string(l) + "]";
        if (!layers[l].is_object()) fail(at, "expected an object with the layer's name");
        only(layers[l], at, {"name", "compute_s", "forward_comm_s", "backward_comm_s", "sync_comm_s", "predicted_s"});
        measured(layers[l], at, {"compute_s", "forward_comm_s", "backward_comm_s", "sync_comm_s", "predicted_s"});
        const std::string& got = member(layers[l], at, "name", JsonValue::Kind::string).as_string();
        if (got != m_graph.layers[l].name)
            fail(at + ".name", "'" + got + "' where the config's network has '" + m_graph.layers[l].name +
                                   "': layers lists the network's GEMM layers in the trace's order");
    }
    planner::PlanDecisions d;
    d.options.kind =
        name<planner::PlannerKind>(member(root, "", "planner", JsonValue::Kind::string), "planner", "a planner");
    if (const JsonValue* v = optional(root, "", "comm_only", JsonValue::Kind::boolean))
        d.options.comm_only = v->as_bool();
    if (const JsonValue* v = optional(root, "", "equal_split", JsonValue::Kind::boolean))
        d.options.equal_split = v->as_bool();
    // What the run measured and chose: not decisions, but only what plan.json writes there.
    const auto entries = [&](const char* key, std::initializer_list<std::string_view> fields) {
        if (const JsonValue* list = optional(root, "", key, JsonValue::Kind::array))
            for (std::size_t i = 0; i < list->items().size(); ++i) {
                const std::string at = std::string(key) + "[" + std::to_string(i) + "]";
                if (!list->items()[i].is_object()) fail(at, "expected an object, as fastsim plan writes it");
                only(list->items()[i], at, fields);
                for (const std::string_view f : fields)
                    if (f != "algorithm" && f != "dimensions") measured(list->items()[i], at, {f.data()});
            }
    };
    entries("memory", {"node", "memory_bytes", "capacity_bytes", "weights_bytes", "weight_gradients_bytes",
                       "optimizer_state_bytes", "stashed_activations_bytes", "buffers_bytes"});
    entries("all_reduces", {"algorithm", "dimensions", "ranks", "count", "bytes"});
    const JsonValue* p = optional(root, "", "pipeline", JsonValue::Kind::object);
    // A plan with stages is a pipeline planner's, or one that another planner kept (accpar's with
    // chosen_from pipeline).
    const JsonValue* from = optional(root, "", "chosen_from", JsonValue::Kind::string);
    const bool from_pipeline =
        from != nullptr && planner::is_pipeline(name<planner::PlannerKind>(*from, "chosen_from", "a planner"));
    if ((planner::is_pipeline(d.options.kind) || from_pipeline) != (p != nullptr))
        fail(p ? "pipeline" : "planner",
             p ? "only a pipeline planner's plan (pipeline, alpa) has stages, or accpar's that kept pipeline's "
                 "(chosen_from pipeline), and this is a plan of " +
                     std::string(planner::to_string(d.options.kind)) + ": drop pipeline, or name the planner"
               : "a plan of " + std::string(planner::to_string(d.options.kind)) + " needs its stages: pipeline.stages");
    if (p) {
        if (const JsonValue* v = optional(*p, "pipeline", "intra", JsonValue::Kind::string)) {
            d.options.pipeline.intra = name<planner::PlannerKind>(*v, "pipeline.intra", "a planner");
            if (planner::is_pipeline(d.options.pipeline.intra))
                fail("pipeline.intra",
                     "'" + v->as_string() + "' is a pipeline planner; a stage is split by an intra-layer one");
        }
        // The whole-cluster part of a pipeline plan is one leaf group over every node in order.
        const planner::HierarchyDecisions top = hierarchy(root, "", d.options);
        std::vector<std::size_t> all(nodes);
        for (std::size_t n = 0; n < nodes; ++n) all[n] = n;
        if (top.groups.size() != 1 || !top.groups[0].empty() || top.group_nodes[0] != all)
            fail("groups",
                 "a pipeline plan's groups is one group of every node, in order, with no splits "
                 "(the splits are each stage's groups)");
        d.pipeline = pipeline(*p, d.options);
        d.pipeline->chosen_from = top.chosen_from;
        d.options.pipeline.schedule = d.pipeline->schedule;
        d.options.pipeline.microbatches = d.pipeline->microbatches;
        d.options.pipeline.stages = d.pipeline->stages.size();
    } else {
        d.hierarchy = hierarchy(root, "", d.options);
    }
    return d;
}

}  // namespace

planner::PlanDecisions read_plan_file(const std::string& path, const planner::LayerGraph& graph,
                                      const ClusterParams& cluster) {
    return PlanReader(path, graph, cluster).read(read_json_file(path));
}

planner::PlanDecisions read_plan_text(const std::string& text, const std::string& source,
                                      const planner::LayerGraph& graph, const ClusterParams& cluster) {
    return PlanReader(source, graph, cluster).read(parse_json(text, source));
}

}  // namespace fastsim::config
