// SPDX-License-Identifier: MIT
// A config file: its sections by run mode, and dump (docs/config.md). Each section is in its
// own file (sections.h).
#include "config/load.h"

#include "common/input_file.h"
#include "config/sections.h"

namespace fastsim::config {
namespace {

/// Every top-level section and the run modes it belongs to (empty = every mode).
struct Section {
    const char* name;
    std::vector<RunMode> modes;
};
const std::vector<Section>& sections() {
    static const std::vector<Section> all{
        {"run", {}},
        {"bfp", {}},
        {"bfp_report", {RunMode::bfp_report}},
        {"workload", {RunMode::training_step, RunMode::cluster}},
        {"node", {RunMode::training_step}},
        {"precision", {RunMode::training_step}},
        {"energy", {RunMode::training_step, RunMode::cluster}},
        {"node_types", {RunMode::cluster}},
        {"cluster", {RunMode::cluster}},
        {"planner", {RunMode::cluster}},
    };
    return all;
}

/// A section of another run mode is an error, not a no-op.
void check_sections_belong(const MapReader& top, const Document& doc, RunMode mode) {
    for (const Section& s : sections()) {
        if (s.modes.empty() || !top.contains(s.name)) continue;
        bool belongs = false;
        std::string names;
        for (const RunMode m : s.modes) {
            belongs = belongs || m == mode;
            names += (names.empty() ? "" : " or ") + std::string(to_string(m));
        }
        if (belongs) continue;
        const std::string is = s.modes.size() == 1 ? " (run.mode is " + std::string(to_string(mode)) + ")" : "";
        throw ConfigError(doc.locate(doc.root[s.name], s.name), "applies only to run.mode " + names + is);
    }
}

}  // namespace

Params load(const std::string& path, const std::vector<std::string>& overrides) {
    return load_text(read_input_file(path, "config file"), path, overrides);
}

Params load_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides) {
    Document doc = Document::parse(text, path);
    for (const auto& o : overrides) doc.apply_override(o);
    MapReader top(doc, doc.root, "");
    if (top.contains("train"))
        throw ConfigError(top.location_of("train"),
                          "this is a `fastsim train` config (its train: section): run it with fastsim train; run, "
                          "plan, compare and explore read run configs, such as the whole_run_<policy>.yaml that "
                          "`fastsim train --out DIR` writes into DIR for each costed policy's whole run "
                          "(docs/fast-training.md)");
    for (const Section& s : sections()) (void)top.raw(s.name);  // the known sections
    top.finish();

    Params p;
    p.source_file = path;
    const KeyReader run = read_run_section(top, p.run);
    Location bias_where;
    p.bfp = read_bfp_section(top, &bias_where);
    check_sections_belong(top, doc, p.run.mode);
    switch (p.run.mode) {
    case RunMode::bfp_report: p.bfp_report = read_bfp_report_section(top, p.bfp, bias_where); break;
    case RunMode::training_step: resolve_training(top, p); break;
    case RunMode::cluster: resolve_cluster(top, run, p); break;
    }
    return p;
}

Params load_network(const std::string& path, const std::vector<std::string>& overrides) {
    Document doc = Document::parse(read_input_file(path, "config file"), path);
    for (const auto& o : overrides) {
        // Only the network is read, cluster.groups and cluster.upper: an override of any other
        // key (the cluster's optimiser, gradient_sync, ...) would change nothing.
        const std::string key = o.substr(0, o.find('='));
        const auto under = [&](const std::string& prefix) {
            return key == prefix || key.rfind(prefix + ".", 0) == 0 || key.rfind(prefix + "[", 0) == 0;
        };
        if (key != "cluster" && !under("cluster.groups") && !under("cluster.upper"))
            throw ConfigError(Location{"-p " + o, 0, 0, ""},
                              "only the network is read here, cluster.groups and cluster.upper (the collectives run "
                              "on it alone); '" +
                                  key + "' would change nothing");
        doc.apply_override(o);
    }
    MapReader top(doc, doc.root, "");
    Params p;
    p.source_file = path;
    resolve_network(top, p);
    for (const Section& s : sections()) (void)top.raw(s.name);  // known, and not read here
    top.finish();                                               // an unknown top-level key is a typo
    return p;
}

std::string dump(const Params& p) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    dump_run_sections(out, p);
    if (p.run.mode == RunMode::training_step) dump_training(out, p);
    if (p.run.mode == RunMode::cluster) dump_cluster(out, p);
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::vector<std::pair<std::string, std::string>> key_tables() {
    std::vector<std::pair<std::string, std::string>> all;
    for (auto tables : {run_key_tables(), training_key_tables(), node_key_tables(), cluster_key_tables()})
        for (auto& t : tables) all.push_back(std::move(t));
    return all;
}

}  // namespace fastsim::config
