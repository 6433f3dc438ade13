// SPDX-License-Identifier: MIT
// `fastsim report`'s library: CSV and JSON readers, number display, and the sweep and run pages
// built from the fixtures in tests/data/sweeps (made from real runs by make_fixtures.py).
#include <catch2/catch.hpp>

#include <map>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "common/csv_reader.h"
#include "report/html_page.h"
#include "common/json_reader.h"
#include "report/results_dir.h"
#include "report/svg_chart.h"
#include "support/temp_dir.h"

using namespace fastsim;
using namespace fastsim::report;
using Catch::Matchers::Contains;
using fastsim::UserError;

namespace {

const std::string kNodeSweep = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/sweeps/resnet18_array_precision";
const std::string kClusterSweep = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/sweeps/tiny_cluster_planners";

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// A copy of a fixture sweep in `dir` with `results.csv` replaced by `results` (if non-empty).
std::string sweep_copy(const fastsim::test::TempDir& dir, const std::string& fixture, const std::string& results = "",
                       const std::string& sweep_json = "") {
    const std::string target = dir.path("sweep");
    std::filesystem::copy(fixture, target, std::filesystem::copy_options::recursive);
    if (!results.empty()) std::ofstream(target + "/results.csv") << results;
    if (!sweep_json.empty()) std::ofstream(target + "/sweep.json") << sweep_json;
    return target;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

/// "<td class="num">TEXT</td>": how a number appears in a report table.
std::string number_cell(double v) { return "<td class=\"num\">" + display_number(v) + "</td>"; }

}  // namespace

TEST_CASE("CSV reader follows RFC 4180 and records each row's line", "[report]") {
    const CsvTable t = parse_csv("a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\r\n\n2,\"two\nlines\",\n3,,z", "t.csv");
    REQUIRE(t.header == std::vector<std::string>{"a", "b", "c"});
    REQUIRE(t.rows.size() == 3);
    CHECK(t.rows[0] == std::vector<std::string>{"1", "x, y", "say \"hi\""});
    CHECK(t.rows[1] == std::vector<std::string>{"2", "two\nlines", ""});
    CHECK(t.rows[2] == std::vector<std::string>{"3", "", "z"});
    CHECK(t.row_lines == std::vector<int>{2, 4, 6});
    CHECK(t.column("c") == 2u);
    CHECK_FALSE(t.column("d"));
}

TEST_CASE("CSV reader errors name the file and line", "[report]") {
    CHECK(error_of([] { parse_csv("a,b\n1,2\n3\n", "r.csv"); }) == "r.csv:3: 1 cells, but the header has 2");
    CHECK(error_of([] { parse_csv("a,b\n1,\"open\n2,3\n", "r.csv"); }) == "r.csv:2: unterminated quoted cell");
    CHECK(error_of([] { parse_csv("a,b\n1,\"x\"y\n", "r.csv"); }) == "r.csv:2: text after a closing quote");
    CHECK(error_of([] { parse_csv("\n\n", "r.csv"); }) == "r.csv: empty file, expected a CSV header line");
    CHECK(error_of([] { parse_csv("\na,b,a\n1,2,3\n", "r.csv"); }) ==
          "r.csv:2: column 'a' is given twice (columns 1 and 3)");
    CHECK(parse_csv("a,,\n1,2,3\n", "r.csv").rows.size() == 1);  // unnamed columns (a trailing comma) may repeat
    CHECK_THAT(error_of([] { read_csv_file("/nonexistent/results.csv"); }),
               Contains("/nonexistent/results.csv: cannot open"));
    CHECK(parse_number(" 12.5 ") == 12.5);
    CHECK_FALSE(parse_number("12abc"));
    CHECK_FALSE(parse_number(""));
    CHECK_FALSE(parse_number("nan"));
}

TEST_CASE("JSON reader parses objects in order, escapes and numbers, and errors give line and column", "[report]") {
    const JsonValue v = parse_json(R"({"a": [1, -2.5e3, true, null], "s": "\u00b5J \"q\"\n", "o": {}})", "x.json");
    REQUIRE(v.is_object());
    REQUIRE(v.members().size() == 3);
    CHECK(v.members()[0].key == "a");
    CHECK(v.find("a")->items()[1].as_number() == -2500);
    CHECK(v.find("a")->items()[2].as_bool());
    CHECK(v.find("a")->items()[3].kind() == JsonValue::Kind::null);
    CHECK(v.find("s")->as_string() == "\xC2\xB5J \"q\"\n");
    CHECK(v.find("o")->is_object());
    CHECK(v.find("missing") == nullptr);
    CHECK(error_of([] { parse_json("{\n  \"a\": 1,\n  \"b\" 2\n}", "x.json"); }) ==
          "x.json:3:7: expected ':' after a member name");
    CHECK(error_of([] { parse_json("[1, 2", "x.json"); }) == "x.json:1:6: expected ',' or ']' in an array");
    CHECK(error_of([] { parse_json("{} x", "x.json"); }) == "x.json:1:4: unexpected text after the JSON value");
    CHECK(error_of([] { parse_json("01", "x.json"); }) == "x.json:1:2: unexpected text after the JSON value");
}

TEST_CASE("report numbers: integers in full, large values with one decimal, others with 6 digits", "[report]") {
    CHECK(display_number(353440262) == "353440262");
    CHECK(display_number(1065471.71) == "1065471.7");
    CHECK(display_number(353.440262) == "353.44");
    CHECK(display_number(2.05471737) == "2.05472");
    CHECK(display_number(0.000123456789) == "0.000123457");
    CHECK(display_number(-0.0) == "0");
}

TEST_CASE("sweep report: every point's values in the summary, failed points with escaped errors, five plots",
          "[report]") {
    const ReportPage page = sweep_report(kNodeSweep);
    const CsvTable results = read_csv_file(kNodeSweep + "/results.csv");
    REQUIRE(results.rows.size() == 20);
    const std::size_t cycles = *results.column("cycles"), energy = *results.column("energy_uj"),
                      pj = *results.column("pj_per_mac"), status = *results.column("status");
    int ok = 0;
    for (const auto& row : results.rows) {
        CHECK_THAT(page.html, Contains("<td>" + row[0] + "</td>"));
        if (row[status] != "ok") continue;
        ++ok;
        CHECK_THAT(page.html, Contains(number_cell(*parse_number(row[cycles]))));
        CHECK_THAT(page.html, Contains(number_cell(*parse_number(row[energy]))));
        CHECK_THAT(page.html, Contains(number_cell(*parse_number(row[pj]))));
    }
    CHECK(ok == 18);
    CHECK_THAT(page.html, Contains("18 ok, 2 failed"));
    // Failed points: the error from points/<id>/point.json, escaped.
    CHECK_THAT(page.html, Contains("fMACs &amp; &quot;m=4&quot; need &gt; 1024 KiB of SRAM &lt;injected&gt;"));
    CHECK_THAT(page.html, Contains("killed after 600 s (timeout) &lt;injected&gt;"));
    CHECK_THAT(page.html, !Contains("<injected>"));
    // Plots: the four metrics against node.array.rows (log2), and the energy breakdown.
    std::vector<std::string> names;
    for (const auto& [name, svg] : page.plots) names.push_back(name);
    CHECK(names == std::vector<std::string>{"cycles.svg", "energy_uj.svg", "utilisation_percent.svg", "pj_per_mac.svg",
                                            "energy_breakdown.svg"});
    CHECK_THAT(page.plots[0].second, Contains("node.array.rows (log2 scale)"));
    for (const char* series : {">2</text>", ">4</text>", ">6</text>", ">8</text>"})
        CHECK_THAT(page.plots[0].second, Contains(series));
    // Self-contained: every plot inlined, no scripts, nothing fetched.
    for (const auto& [name, svg] : page.plots) CHECK_THAT(page.html, Contains(svg));
    CHECK_THAT(page.html, !Contains("<script"));
    CHECK_THAT(page.html, !Contains("src="));
    CHECK_THAT(page.html, !Contains("href=\"http"));
}

TEST_CASE("sweep report of a cluster sweep: step time plot, string x values, unknown quoted columns shown",
          "[report]") {
    const ReportPage page = sweep_report(kClusterSweep);
    REQUIRE_FALSE(page.plots.empty());
    CHECK(page.plots[0].first == "step_ms.svg");
    CHECK_THAT(page.plots[0].second, Contains(">accpar</text>"));
    CHECK_THAT(page.plots[0].second, !Contains("log2"));
    CHECK_THAT(page.html, Contains("<td>data_parallel, batch 8</td>"));  // the "note" column, quoted in the CSV
    CHECK_THAT(page.html, !Contains("<th>error</th>"));                  // no failed point: no error column shown
    CHECK_THAT(page.plots[0].second,
               Contains(">workload.batch</text>"));  // "series": "" keeps the default: lines per batch
    CHECK_THAT(page.html, Contains("energy links (µJ)"));
}

TEST_CASE("sweep report errors name the file and line or key", "[report]") {
    fastsim::test::TempDir dir;
    const std::string header =
        slurp(kNodeSweep + "/results.csv").substr(0, slurp(kNodeSweep + "/results.csv").find('\n') + 1);
    SECTION("a non-number in a result column") {
        const std::string d = sweep_copy(dir, kNodeSweep,
                                         header +
                                             "p0000,8,8,2,2,2,ok,123,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,\n"
                                             "p0001,8,8,4,4,4,ok,12x,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,\n");
        CHECK(error_of([&] { sweep_report(d); }) == d + "/results.csv:3: column 'cycles': '12x' is not a number");
    }
    SECTION("a ragged row") {
        const std::string d = sweep_copy(dir, kNodeSweep, header + "p0000,8,8\n");
        CHECK(error_of([&] { sweep_report(d); }) == d + "/results.csv:2: 3 cells, but the header has 24");
    }
    SECTION("an axis key missing from results.csv") {
        const std::string d = sweep_copy(dir, kNodeSweep, "point,status,cycles\np0000,ok,1\n");
        CHECK(error_of([&] { sweep_report(d); }) ==
              d + "/results.csv:1: no column 'node.array.rows' (an axis key of " + d + "/sweep.json)");
    }
    SECTION("corrupt sweep.json") {
        const std::string d = sweep_copy(dir, kNodeSweep, "", "{\"axes\": [}");
        CHECK(error_of([&] { sweep_report(d); }) == d + "/sweep.json:1:11: expected a JSON value, got '}'");
    }
    SECTION("plot.x not a column") {
        const std::string d = sweep_copy(
            dir, kNodeSweep, "",
            R"({"format": "fastsim-sweep/1", "axes": [{"name": "array", "keys": ["node.array.rows"]}], "points": 20,
                "plot": {"x": "node.array.depth"}})");
        CHECK(error_of([&] { sweep_report(d); }) ==
              d + "/sweep.json: plot.x: 'node.array.depth' is not a column of " + d + "/results.csv");
    }
    SECTION("axes without keys, and another format") {
        std::string d = sweep_copy(dir, kNodeSweep, "",
                                   R"({"format": "fastsim-sweep/1", "axes": [{"name": "array", "keys": []}]})");
        CHECK(error_of([&] { sweep_report(d); }) ==
              d + "/sweep.json: axes[0].keys: expected a non-empty array of key paths");
        std::ofstream(d + "/sweep.json") << R"({"format": "fastsim-sweep/2", "axes": []})";
        CHECK(error_of([&] { sweep_report(d); }) ==
              d + "/sweep.json: format: this fastsim reads fastsim-sweep/1, got 'fastsim-sweep/2'");
    }
}

TEST_CASE("run report sums a layer's phases into one energy bar and shows the totals", "[report]") {
    fastsim::test::TempDir dir;
    dir.write("report.json", R"({"config": "c.yaml", "network": "net<1>", "batch": 2, "fidelity": "memo",
        "node": {"array_rows": 4, "array_cols": 3, "group_size": 16, "clock_hz": 700000000},
        "total_cycles": 24888, "total_seconds": 3.55542857e-05, "total_macs": 152604, "total_energy_pj": 7023630.5,
        "energy_pj": {"fmac": 1000000, "converter": 23630.5, "sram": 2000000, "dram": 4000000, "leakage": 0},
        "pj_per_mac": 46.0252, "utilisation_percent": 27.9331, "cycles": {"array": 23007, "load_wait": 1459, "sram_stall": 0, "drain": 422}})");
    dir.write("layers.csv",
              "layer,phase,cycles,energy_fmac_pj,energy_dram_pj,energy_total_pj\n"
              "\"a\",\"forward\",10,1000000,500000,1500000\n"
              "\"b\",\"forward\",20,0,3000000,3000000\n"
              "\"a\",\"backward_data\",30,2000000,0,2000000\n");
    CHECK(classify_results_dir(dir.path("")) == ResultsDirKind::run);
    const ReportPage page = run_report(dir.path(""));
    REQUIRE(page.plots.size() == 1);
    CHECK(page.plots[0].first == "energy_by_layer.svg");
    const std::string& svg = page.plots[0].second;
    CHECK_THAT(svg, Contains("<title>a: fmac = 3</title>"));  // 1 + 2 µJ over a's two phases
    CHECK_THAT(svg, Contains("<title>a: dram = 0.5</title>"));
    CHECK_THAT(svg, Contains("<title>b: dram = 3</title>"));
    CHECK_THAT(page.html, Contains("net&lt;1&gt;"));
    CHECK_THAT(page.html, Contains(number_cell(24888)));
    CHECK_THAT(page.html, Contains(number_cell(7023630.5 * 1e-6)));      // energy, µJ
    CHECK_THAT(page.html, Contains(number_cell(3.55542857e-05 * 1e3)));  // time, ms
    CHECK_THAT(page.html, Contains(number_cell(46.0252)));
    CHECK_THAT(page.html, Contains("<td>backward_data</td>"));
}

TEST_CASE("run report stacks each layer's cycles by where they went", "[report]") {
    // A layer's phases summed, per cycle part layers.csv has (in millions); an older file
    // without converter_wait_cycles shows the parts it has.
    fastsim::test::TempDir dir;
    dir.write("report.json", R"({"config": "c.yaml", "network": "n", "batch": 2, "fidelity": "memo",
        "total_cycles": 9000000, "total_seconds": 0.009, "total_macs": 1, "total_energy_pj": 1,
        "energy_pj": {"fmac": 1}, "pj_per_mac": 1, "utilisation_percent": 1})");
    dir.write("layers.csv",
              "layer,phase,cycles,array_cycles,load_wait_cycles,converter_wait_cycles,vector_cycles,energy_total_pj\n"
              "\"a\",\"forward\",3000000,2000000,500000,500000,0,1\n"
              "\"b\",\"forward\",2000000,0,0,0,2000000,1\n"
              "\"a\",\"backward_data\",4000000,1000000,0,3000000,0,1\n");
    const ReportPage page = run_report(dir.path(""));
    REQUIRE(page.plots.size() == 2);
    CHECK(page.plots[1].first == "cycles_by_layer.svg");
    const std::string& svg = page.plots[1].second;
    CHECK_THAT(svg, Contains("<title>a: array = 3</title>"));
    CHECK_THAT(svg, Contains("<title>a: converter = 3.5</title>"));
    CHECK_THAT(svg, Contains("<title>a: DRAM = 0.5</title>"));
    CHECK_THAT(svg, Contains("<title>b: vector = 2</title>"));
    CHECK_THAT(svg, !Contains("SRAM"));  // no sram_stall_cycles column
}

TEST_CASE("run report: a unit has one colour in every chart of the page", "[report]") {
    // The energy chart lists fmac and vector; the cycles chart array, DRAM and vector: the
    // array's cycles take fmac's colour, vector keeps its own, DRAM takes the next.
    fastsim::test::TempDir dir;
    dir.write("report.json", R"({"config": "c.yaml", "network": "n", "batch": 2, "fidelity": "memo",
        "total_cycles": 3000000, "total_seconds": 0.003, "total_macs": 1, "total_energy_pj": 2,
        "energy_pj": {"fmac": 1, "vector": 1}, "pj_per_mac": 1, "utilisation_percent": 1})");
    dir.write("layers.csv",
              "layer,phase,cycles,array_cycles,load_wait_cycles,vector_cycles,energy_fmac_pj,energy_vector_pj,"
              "energy_total_pj\n"
              "\"a\",\"forward\",3000000,1000000,1000000,1000000,1,1,2\n");
    const ReportPage page = run_report(dir.path(""));
    REQUIRE(page.plots.size() == 2);
    const std::string& energy = page.plots[0].second;
    const std::string& cycles = page.plots[1].second;
    const auto fill = [](const std::string& svg, const std::string& title) {
        const std::size_t at = svg.find("\"><title>" + title + "</title>");
        REQUIRE(at != std::string::npos);
        const std::size_t start = svg.rfind("fill=\"", at) + 6;
        return svg.substr(start, at - start);
    };
    CHECK(fill(energy, "a: fmac = 1e-06") == std::string(fastsim::charts::palette_colour(0)));
    CHECK(fill(cycles, "a: array = 1") == fill(energy, "a: fmac = 1e-06"));
    CHECK(fill(cycles, "a: vector = 1") == fill(energy, "a: vector = 1e-06"));
    CHECK(fill(cycles, "a: DRAM = 1") == std::string(fastsim::charts::palette_colour(2)));
}

TEST_CASE("cluster run report stacks each node's step and each pipeline stage's", "[report]") {
    fastsim::test::TempDir dir;
    dir.write("report.json", R"({"config": "c.yaml", "network": "n", "batch": 4, "nodes": 2, "planner": "pipeline",
        "simulated_step_s": 0.01, "planned_step_s": 0.01, "comm_bytes_planned": 100,
        "energy_pj": {"fmac": 1, "converter": 0, "vector": 2, "sram": 0, "dram": 0, "leakage": 0, "links": 0,
        "compression": 0, "total": 3},
        "pipeline": {"schedule": "gpipe", "microbatches": 2, "bubble_fraction": 0.2, "planned_bubble_fraction": 0.2,
        "stages": [{"busy_s": 0.008, "idle_s": 0.002, "planned_busy_s": 0.008,
                    "spans": [{"pass": "forward", "microbatch": 0, "start_s": 0, "end_s": 0.001},
                              {"pass": "backward", "microbatch": 1, "start_s": 0.004, "end_s": 0.006},
                              {"pass": "weight_update", "start_s": 0.009, "end_s": 0.01}]},
                   {"busy_s": 0.007, "idle_s": 0.003, "planned_busy_s": 0.007}]}})");
    dir.write("layers.csv", "layer,type_root,planned_s,simulated_s\n\"a\",\"I\",0.01,0.01\n");
    dir.write("nodes.csv",
              "node,type,compute_s,compute_array_s,compute_vector_s,comm_wait_s,idle_s,macs,energy_fmac_pj,"
              "energy_vector_pj\n"
              "0,\"x\",0.008,0.005,0.003,0.001,0.001,10,1,1\n1,\"x\",0.006,0.006,0,0.004,0,10,0,1\n");
    const ReportPage page = run_report(dir.path(""));
    std::map<std::string, std::string> plots(page.plots.begin(), page.plots.end());
    REQUIRE(plots.count("time_by_node.svg") == 1);
    const std::string& time = plots.at("time_by_node.svg");
    CHECK_THAT(time, Contains("<title>node 0 (x): array = 5</title>"));  // ms
    CHECK_THAT(time, Contains("<title>node 0 (x): vector unit = 3</title>"));
    CHECK_THAT(time, Contains("<title>node 1 (x): exposed communication = 4</title>"));
    REQUIRE(plots.count("time_by_stage.svg") == 1);
    CHECK_THAT(plots.at("time_by_stage.svg"), Contains("<title>stage 1: idle = 3</title>"));
    CHECK(plots.count("energy_by_node.svg") == 1);
    // The timeline: a row per stage (stage 1 has no spans), each span in ms where the axis puts it.
    REQUIRE(plots.count("stage_timeline.svg") == 1);
    const std::string& timeline = plots.at("stage_timeline.svg");
    CHECK_THAT(timeline, Contains("<title>stage 0: backward mb 1, 4 – 6</title>"));
    CHECK_THAT(timeline, Contains("<title>stage 0: weight update, 9 – 10</title>"));
    CHECK_THAT(timeline, Contains(">stage 1</text>"));
    CHECK_THAT(page.html, Contains("weight update"));

    dir.write("report.json", R"({"network": "n", "simulated_step_s": 0.01, "planned_step_s": 0.01,
        "comm_bytes_planned": 1, "energy_pj": {"fmac": 1},
        "pipeline": {"stages": [{"busy_s": 0, "idle_s": 0, "spans": [{"pass": "sideways", "start_s": 0,
        "end_s": 1}]}]}})");
    CHECK(error_of([&] { run_report(dir.path("")); }) ==
          dir.path("") +
              "/report.json: pipeline.stages[0].spans: pass 'sideways' is not forward, backward or "
              "weight_update");
}

TEST_CASE("A timeline chart draws each span from its start to its end on its row", "[report]") {
    fastsim::charts::TimelineChart chart;
    chart.title = "t";
    chart.x_title = "time (ms)";
    chart.rows = {"a", "b"};
    chart.components = {"forward", "backward"};
    chart.spans = {{0, 0, 0, 5, "x"}, {1, 1, 5, 10, ""}, {2, 0, 0, 1, "bad row"}, {0, 1, 3, 2, "ends first"}};
    const std::string svg = fastsim::charts::render_timeline_chart(chart, {640, 400});
    // Two spans drawn; the axis runs 0 … 10 over [x0, x1], so the second starts halfway.
    std::vector<double> xs, widths;
    for (std::size_t at = svg.find("<rect class=\"span\""); at != std::string::npos;
         at = svg.find("<rect class=\"span\"", at + 1)) {
        const auto attr = [&](const std::string& name) {
            const std::size_t from = svg.find(name + "=\"", at) + name.size() + 2;
            return std::stod(svg.substr(from, svg.find('"', from) - from));
        };
        xs.push_back(attr("x"));
        widths.push_back(attr("width"));
    }
    REQUIRE(xs.size() == 2);
    CHECK(widths[0] == Approx(widths[1]).margin(0.01));
    CHECK(xs[1] == Approx(xs[0] + widths[0]).margin(0.01));
    CHECK_THAT(svg, Contains("<title>a: forward x, 0 – 5</title>"));
    CHECK_THAT(svg, Contains("<title>b: backward, 5 – 10</title>"));
    CHECK_THAT(svg, !Contains("bad row"));
    CHECK_THAT(svg, !Contains("ends first"));
    chart.spans.clear();
    CHECK_THAT(fastsim::charts::render_timeline_chart(chart), Contains("no data"));
}

TEST_CASE("report directories are told apart, and others are refused by name", "[report]") {
    fastsim::test::TempDir dir;
    CHECK(classify_results_dir(kNodeSweep) == ResultsDirKind::sweep);
    CHECK(error_of([&] { classify_results_dir(dir.path("")); }) ==
          dir.path("") +
              ": neither a sweep directory (sweep.json, results.csv), a run directory (report.json, layers.csv), "
              "a training directory (comparison.csv, accuracy.csv) nor an exploration (explore.json, designs.csv, "
              "pareto.csv)");
    CHECK(error_of([] { classify_results_dir("/nonexistent/sweep"); }) == "/nonexistent/sweep: not a directory");
    dir.write("sweep.json", "{}");
    CHECK_THAT(error_of([&] { classify_results_dir(dir.path("")); }), Contains("results.csv: cannot open"));
    dir.write("results.csv", "point,status\n");
    dir.write("sweep.json", "{\"axes\": 3}");
    CHECK(error_of([&] { sweep_report(dir.path("")); }) ==
          dir.path("") + "/sweep.json: format: expected 'fastsim-sweep/1', as fastsim sweep writes it (it is missing)");
    dir.write("sweep.json", "{\"format\": \"fastsim-sweep/1\", \"axes\": 3}");
    CHECK(error_of([&] { sweep_report(dir.path("")); }) ==
          dir.path("") + "/sweep.json: axes: expected a non-empty array of axes");
}

TEST_CASE("a one-axis sweep draws one unnamed line, and a sweep with no ok point has nothing to plot", "[report]") {
    fastsim::test::TempDir dir;
    dir.write(
        "sweep.json",
        R"({"format": "fastsim-sweep/1", "name": "rows", "points": 3, "axes": [{"name": "rows", "keys": ["node.array.rows"]}]})");
    dir.write("results.csv",
              "point,node.array.rows,status,cycles,energy_uj,energy_fmac_uj\n"
              "p0000,8,ok,400,2,1\np0001,16,ok,200,3,1.5\np0002,32,failed,,,\n");
    const ReportPage page = sweep_report(dir.path(""));
    REQUIRE(page.plots.size() == 3);  // cycles, energy_uj, energy_breakdown
    const std::string& cycles = page.plots[0].second;
    CHECK_THAT(cycles, Contains("<title>8, 400</title>") && Contains("<title>16, 200</title>"));
    CHECK_THAT(cycles, !Contains("legend-marker"));
    CHECK_THAT(page.html, Contains("3 points in results.csv: 2 ok, 1 failed"));
    CHECK_THAT(page.html, Contains("(no " + dir.path("") + "/points/p0002/point.json)"));
    // Without an error column the error comes from point.json.
    std::filesystem::create_directories(dir.path("points/p0002"));
    dir.write("points/p0002/point.json", R"({"point": "p0002", "status": "failed", "error": "killed by SIGSEGV"})");
    CHECK_THAT(sweep_report(dir.path("")).html, Contains("<td>killed by SIGSEGV</td>"));
    dir.write("results.csv", "point,node.array.rows,status,cycles\np0000,8,failed,\n");
    const ReportPage none = sweep_report(dir.path(""));
    CHECK(none.plots.empty());
    CHECK_THAT(none.html, Contains("No point succeeded: nothing to plot."));
}

TEST_CASE("a train directory's report shows its policies, the plots train wrote and the epochs", "[report]") {
    fastsim::test::TempDir dir;
    dir.write("comparison.csv",
              "policy,final_test_accuracy,total_cycles,total_energy_uj\nfp32,0.91,2000,10\nfast,0.9,700,3.5\n");
    dir.write("accuracy.csv", "policy,epoch,test_accuracy\nfp32,1,0.91\nfast,1,0.9\n");
    dir.write("cost.csv", "policy,epoch,cycles\nfp32,1,2000\nfast,1,700\n");
    std::filesystem::create_directories(dir.path("plots"));
    dir.write("plots/accuracy.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><title>acc</title></svg>");
    dir.write("plots/accuracy_vs_cycles.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>");
    dir.write("plots/cycles_per_epoch.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>");
    CHECK(classify_results_dir(dir.path("")) == ResultsDirKind::train);
    const ReportPage page = train_report(dir.path(""));
    REQUIRE(page.plots.size() == 3);
    CHECK(page.plots[0].first == "accuracy.svg");
    CHECK_THAT(page.html, Contains("<title>acc</title>"));
    CHECK_THAT(page.html, Contains("<td>fast</td>"));
    CHECK_THAT(page.html, Contains(number_cell(700)));
    CHECK_THAT(page.html, Contains("Cost per epoch"));
    // With no policy costed (policies: [fp32]) train leaves cost.csv a header: no cost section.
    dir.write("cost.csv", "policy,epoch,cycles\n");
    CHECK_THAT(train_report(dir.path("")).html, !Contains("Cost per epoch"));
    // The files must agree: a final accuracy that is not the last epoch's is another run's.
    dir.write("comparison.csv",
              "policy,final_test_accuracy,total_cycles,total_energy_uj\nfp32,0.91,2000,10\nfast,0.5,700,3.5\n");
    CHECK_THAT(error_of([&] { (void)train_report(dir.path("")); }),
               Contains("comparison.csv:3: final_test_accuracy of policy 'fast' is '0.5'"));
    // A comparison without its accuracy.csv is refused naming the missing file.
    fastsim::test::TempDir half;
    half.write("comparison.csv", "policy\nfp32\n");
    CHECK(error_of([&] { (void)classify_results_dir(half.path("")); }) ==
          half.path("") + "/accuracy.csv: cannot open: missing, though comparison.csv is there");
}

TEST_CASE("The knee of a front: nearest the ideal point, each objective scaled to the front's range", "[report]") {
    // (time, energy): the extremes are 1 and 1 away from the ideal (0, 0) after scaling; the
    // middle design (0.2, 0.3 scaled) is nearer.
    CHECK(fastsim::report::knee_of({{10, 100}, {12, 40}, {20, 10}}) == std::optional<std::size_t>(1));
    CHECK(fastsim::report::knee_of({{5, 7}}) == std::optional<std::size_t>(0));
    CHECK_FALSE(fastsim::report::knee_of({}).has_value());
}
