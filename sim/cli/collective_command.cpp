// SPDX-License-Identifier: MIT
// `fastsim collective CONFIG.yaml --op OP --algorithm A --bytes N ... [--out DIR]`: one
// collective at a time on the SystemC network of the config's cluster section, nccl-tests style
// (docs/cli.md, "fastsim collective").
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "cli/numbers.h"
#include "cli/progress.h"
#include "common/errors.h"
#include "common/output_files.h"
#include "config/load.h"
#include "output/collective_report.h"
#include "sweep/run_dir.h"
#include "run/collective_run.h"

namespace fastsim::cli {
namespace {

/// The largest buffer a row may move: 2^50 bytes (1 PiB).
constexpr std::uint64_t kMaxCollectiveBytes = std::uint64_t{1} << 50;

/// "best", an algorithm, or one per dimension joined by '/' ("ring/direct").
interconnect::AlgorithmPerDimension parse_algorithm(const std::string& text) {
    if (text == "best") return {};
    interconnect::AlgorithmPerDimension out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = text.find('/', start);
        const std::string name = text.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        const auto a = parse_name<interconnect::AllReduceAlgorithm>(name);
        if (!a)
            throw UserError("--algorithm: expected best, one of " + name_list<interconnect::AllReduceAlgorithm>() +
                            ", or one per dimension joined by '/' (ring/direct), got '" + text + "'");
        out.push_back(*a);
        if (slash == std::string::npos) return out;
        start = slash + 1;
    }
}

}  // namespace

int collective_command(const std::vector<std::string>& args) {
    namespace po = boost::program_options;
    const std::string usage =
        "fastsim collective CONFIG.yaml [--op OP]... [--algorithm A]... [--bytes N]... [--ranks N] [--group G] "
        "[--out DIR] [--max-work S] [-p key=value]...";
    po::options_description options(
        usage +
        "\n\nSimulates each collective alone on the SystemC network of CONFIG's cluster section (its workload,\n"
        "node types and planner are not read) and prints op, algorithm, dimensions, ranks, bytes, the time,\n"
        "its closed form and nccl-tests' algbw and busbw; --out writes them to DIR/collective.csv.\n\nOptions");
    std::string config_path, out_dir, max_work, ranks_text, group_text = "0";
    std::vector<std::string> ops_text, algorithms_text, bytes_text, overrides;
    options.add_options()("config", po::value(&config_path), "YAML config with a cluster: section")(
        "op", po::value(&ops_text)->composing(),
        ("all_reduce (default), reduce_scatter, all_gather or all_to_all; repeatable"))(
        "algorithm", po::value(&algorithms_text)->composing(),
        ("best (default: the fastest per dimension and size), " + name_list<interconnect::AllReduceAlgorithm>() +
         ", or one per dimension joined by '/'; repeatable")
            .c_str())("bytes", po::value(&bytes_text)->composing(),
                      "n, the buffer per rank in bytes (the gathered result of an all-gather); repeatable; "
                      "default 1 KiB to 1 GiB by factors of 4")(
        "ranks", po::value(&ranks_text), "the first N nodes of the group (default: all of them)")(
        "group", po::value(&group_text), "index of cluster.groups to run over, or all (default 0)")(
        "out", po::value(&out_dir), "write collective.csv into this folder")(
        "force", "with --out: replace a run the folder already holds (whole, once this one is complete)")(
        "max-work", po::value(&max_work),
        ("refuse sweeps estimated above this many seconds of work (default " +
         std::to_string(static_cast<int>(run::kDefaultMaxWorkSeconds)) + ")")
            .c_str())("param,p", po::value(&overrides)->composing(),
                      "override a config key: -p key.path=value (repeatable)");
    po::positional_options_description positional;
    positional.add("config", 1);
    const auto vm = parse_command_line(args, options, positional);
    if (!vm) return kSuccess;
    if (config_path.empty()) throw UserError("missing CONFIG: " + usage);
    if (vm->count("force") && out_dir.empty()) throw UserError("--force applies with --out DIR");
    const double max_work_s = vm->count("max-work") ? run::parse_max_work(max_work) : run::kDefaultMaxWorkSeconds;

    const config::Params params = config::load_network(config_path, overrides);
    const config::ClusterParams& c = params.cluster;
    run::CollectiveSweep sweep;
    for (const std::string& o : ops_text.empty() ? std::vector<std::string>{"all_reduce"} : ops_text) {
        const auto op = parse_name<interconnect::CollectiveOp>(o);
        if (!op)
            throw UserError("--op: expected one of " + name_list<interconnect::CollectiveOp>() + ", got '" + o + "'");
        sweep.ops.push_back(*op);
    }
    for (const std::string& a : algorithms_text.empty() ? std::vector<std::string>{"best"} : algorithms_text)
        sweep.algorithms.push_back(parse_algorithm(a));
    if (std::find(sweep.algorithms.begin(), sweep.algorithms.end(), interconnect::AlgorithmPerDimension{}) !=
            sweep.algorithms.end() &&
        sweep.algorithms.size() == 1)
        sweep.algorithms.clear();  // best alone
    for (const std::string& b : bytes_text) {
        sweep.bytes.push_back(static_cast<std::uint64_t>(
            parse_integer_option(b, "--bytes", 1, static_cast<std::int64_t>(kMaxCollectiveBytes))));
    }
    // The ranks: a group's nodes (or all), the first --ranks of them.
    std::size_t first = 0, count = c.node_type.size();
    if (group_text != "all") {
        const auto g = static_cast<std::size_t>(parse_unsigned_option(group_text, "--group", c.groups.size() - 1));
        first = c.group_first_node[g];
        count = c.groups[g].count;
    }
    if (count < 2)
        throw UserError(config_path + ": the group has " + std::to_string(count) +
                        " node; a collective needs at least 2 (--group all, or a larger group)");
    if (vm->count("ranks"))  // a collective needs at least 2
        count =
            static_cast<std::size_t>(parse_integer_option(ranks_text, "--ranks", 2, static_cast<std::int64_t>(count)));
    for (std::size_t i = 0; i < count; ++i) sweep.ranks.emplace_back(first + i);
    // The default sizes: 1 KiB to 1 GiB by fours; with an op that splits the buffer, from the
    // first of at least a byte a rank.
    const bool splits = std::any_of(sweep.ops.begin(), sweep.ops.end(), [](interconnect::CollectiveOp op) {
        return op != interconnect::CollectiveOp::all_reduce;
    });
    if (bytes_text.empty())
        for (std::uint64_t n = 1024; n <= (std::uint64_t{1} << 30); n *= 4)
            if (!splits || n >= count) sweep.bytes.push_back(n);
    // An op that splits the buffer gives each rank n / p bytes: a share of less than one byte is
    // no message.
    for (const interconnect::CollectiveOp op : sweep.ops)
        for (const std::uint64_t n : sweep.bytes)
            if (op != interconnect::CollectiveOp::all_reduce && n < count)
                throw UserError("--bytes " + std::to_string(n) + ": " + std::string(interconnect::to_string(op)) +
                                " over " + std::to_string(count) + " ranks splits the buffer into " +
                                std::to_string(count) + " shares, each under a byte; expected at least " +
                                std::to_string(count) + " bytes");
    for (const interconnect::CollectiveOp op : sweep.ops)
        for (const auto& algorithms : sweep.algorithms)
            if (!algorithms.empty())
                if (const auto why = interconnect::unsupported(*c.topology, op, algorithms, sweep.ranks))
                    throw UserError(config_path + ": " + std::string(interconnect::to_string(op)) + " with " +
                                    interconnect::describe(algorithms) + " over " + std::to_string(count) +
                                    " ranks: " + *why);

    const run::WorkEstimate work = run::estimate_collectives(params, sweep);
    run::check_work(work, max_work_s, config_path);
    std::optional<sweep::RunDirWriter> out;  // checked, locked and staged before simulating
    if (!out_dir.empty()) out.emplace(out_dir, vm->count("force") > 0, "collective");
    std::vector<run::CollectiveRow> rows;
    {
        ProgressLine progress("collectives", work);
        rows = run::run_collectives(params, sweep, progress.callback());
    }
    std::cout << "network: " << c.node_type.size() << " nodes; ";
    for (std::size_t g = 0; g < c.groups.size(); ++g)
        std::cout << (g ? ", " : "") << "group " << g << ": " << c.groups[g].count << " on a "
                  << config::describe_topology(c.groups[g]);
    std::cout << "\n\n";
    output::print_collective_table(std::cout, rows);
    if (out) {
        out->write("collective.csv", output::collective_csv().table(rows));
        out->commit(FASTSIM_VERSION);
        std::cout << "wrote collective.csv to " << out_dir << "\n";
    }
    return kSuccess;
}

}  // namespace fastsim::cli
