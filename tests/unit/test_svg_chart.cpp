// SPDX-License-Identifier: MIT
// The SVG chart library: tick choice, axis placement, escaping, bar geometry, determinism.
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "report/svg_chart.h"

using namespace fastsim::charts;
using Catch::Matchers::Contains;

namespace {

/// Every match of `pattern`'s first group in `text`, as numbers.
std::vector<double> captured_numbers(const std::string& text, const std::string& pattern) {
    std::vector<double> out;
    const std::regex re(pattern);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
        out.push_back(std::stod((*it)[1].str()));
    return out;
}

LineChart array_chart(std::vector<double> xs) {
    LineChart chart;
    chart.title = "cycles vs array rows";
    chart.x_title = "node.array.rows";
    chart.y_title = "cycles";
    LineSeries s;
    s.name = "4";
    for (const double x : xs) s.points.push_back({x, 1e6 / x});
    chart.series.push_back(s);
    return chart;
}

}  // namespace

TEST_CASE("nice_ticks steps by 1, 2 or 5 times a power of ten and covers the range", "[charts]") {
    CHECK(nice_ticks(0, 3.7e9, 5) == std::vector<double>{0, 1e9, 2e9, 3e9, 4e9});
    // 0.74 / 6 = 0.123 rounds up to 0.2; the values are the doubles nearest 0.2, 0.4, ... (0.6, not 0.6000000000000001).
    CHECK(nice_ticks(0.13, 0.87, 6) == std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0});
    CHECK(nice_ticks(-7, 23, 6) == std::vector<double>{-10, -5, 0, 5, 10, 15, 20, 25});
    // A single value gets a range around it; 0 gets [0, 1].
    const auto around_five = nice_ticks(5, 5);
    CHECK(around_five.front() <= 2.5);
    CHECK(around_five.back() >= 7.5);
    CHECK(nice_ticks(0, 0).front() == 0);
    CHECK(nice_ticks(0, 0).back() == 1);
}

TEST_CASE("tick labels are short: k, M, G suffixes above 10^4, no trailing zeros", "[charts]") {
    CHECK(tick_label(0) == "0");
    CHECK(tick_label(2500) == "2500");
    CHECK(tick_label(20000) == "20k");
    CHECK(tick_label(1.5e6) == "1.5M");
    CHECK(tick_label(3e9) == "3G");
    CHECK(tick_label(0.2) == "0.2");
    CHECK(tick_label(-0.25) == "-0.25");
    CHECK(tick_label(0.1 + 0.2) == "0.3");
}

TEST_CASE("x is log2 for positive values spanning 8x or more, else linear or categorical", "[charts]") {
    CHECK(resolve_x_scale(XScale::automatic, {8, 16, 32, 64, 128}, false) == XScale::log2);
    CHECK(resolve_x_scale(XScale::automatic, {1, 2, 4}, false) == XScale::linear);
    CHECK(resolve_x_scale(XScale::automatic, {0, 8, 64}, false) == XScale::linear);
    CHECK(resolve_x_scale(XScale::automatic, {0, 1, 2}, true) == XScale::categorical);
    CHECK(resolve_x_scale(XScale::log2, {-1, 8}, false) == XScale::linear);
    CHECK(log2_ticks(8, 128) == std::vector<double>{8, 16, 32, 64, 128});
    CHECK(log2_ticks(10, 100) == std::vector<double>{8, 16, 32, 64, 128});
    // 2^0 .. 2^20 is 21 powers: every third, then one past the end so the range stays covered.
    CHECK(log2_ticks(1, 1 << 20, 9) == std::vector<double>{1, 8, 64, 512, 4096, 32768, 262144, 2097152});
}

TEST_CASE("on a log2 axis array sizes 8..128 are evenly spaced and 32 sits midway", "[charts]") {
    const std::string svg = render_line_chart(array_chart({8, 16, 32, 64, 128}));
    const auto cx = captured_numbers(svg, R"re(class="marker" cx="([0-9.]+)")re");
    REQUIRE(cx.size() == 5);
    for (std::size_t i = 1; i < cx.size(); ++i) CHECK(cx[i] - cx[i - 1] == Approx(cx[1] - cx[0]).margin(0.011));
    CHECK(cx[1] - cx[0] > 50);
    CHECK(cx[2] == Approx((cx[0] + cx[4]) / 2).margin(0.011));
    CHECK_THAT(svg, Contains("(log2 scale)"));
    // The same points on a linear axis: 16 - 8 is a fifteenth of 128 - 8, not a quarter.
    LineChart linear = array_chart({8, 16, 32, 64, 128});
    linear.x_scale = XScale::linear;
    const auto lx = captured_numbers(render_line_chart(linear), R"re(class="marker" cx="([0-9.]+)")re");
    REQUIRE(lx.size() == 5);
    CHECK((lx[1] - lx[0]) / (lx[4] - lx[0]) == Approx(8.0 / 120.0).margin(0.001));
}

TEST_CASE("y markers sit at their value on the nice y axis", "[charts]") {
    LineChart chart;
    chart.series.push_back({"a", {{1, 0}, {2, 50}, {3, 100}}});
    const std::string svg = render_line_chart(chart);
    const auto cy = captured_numbers(svg, R"re(class="marker" cx="[0-9.]+" cy="([0-9.]+)")re");
    REQUIRE(cy.size() == 3);
    // y ticks 0..100 span the plot: 50 is exactly halfway between the 0 and 100 markers.
    CHECK(cy[0] > cy[2]);
    CHECK(cy[1] == Approx((cy[0] + cy[2]) / 2).margin(0.011));
}

TEST_CASE("categorical x axes place string values in evenly spaced slots", "[charts]") {
    LineChart chart;
    chart.categories = {"data_parallel", "owt", "accpar"};
    chart.series.push_back({"8", {{0, 3}, {1, 2}, {2, 1}}});
    const std::string svg = render_line_chart(chart);
    const auto cx = captured_numbers(svg, R"re(class="marker" cx="([0-9.]+)")re");
    REQUIRE(cx.size() == 3);
    CHECK(cx[2] - cx[1] == Approx(cx[1] - cx[0]).margin(0.011));
    CHECK_THAT(svg, Contains(">data_parallel</text>"));
    CHECK_THAT(svg, Contains("<title>8: owt, 2</title>"));
}

TEST_CASE("all text in charts is escaped for XML", "[charts]") {
    CHECK(xml_escape(R"(a<b & "c" 'd'>)") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
    LineChart chart;
    chart.title = "<script>alert(1)</script>";
    chart.x_title = "x & y";
    chart.series.push_back({"p\"q", {{1, 1}, {2, 2}}});
    const std::string svg = render_line_chart(chart);
    CHECK_THAT(svg, !Contains("<script>"));
    CHECK_THAT(svg, Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    CHECK_THAT(svg, Contains("x &amp; y"));
    CHECK_THAT(svg, Contains("p&quot;q"));
    StackedBarChart bars;
    bars.components = {"<fmac>"};
    bars.bars.push_back({"a&b", {1}});
    const std::string bar_svg = render_stacked_bar_chart(bars);
    CHECK_THAT(bar_svg, Contains("&lt;fmac&gt;"));
    CHECK_THAT(bar_svg, Contains("a&amp;b"));
    CHECK_THAT(bar_svg, !Contains("<fmac>"));
}

TEST_CASE("stacked bar segments are as tall as their values and stack bottom-up", "[charts]") {
    StackedBarChart chart;
    chart.y_title = "energy (µJ)";
    chart.components = {"fmac", "dram"};
    chart.bars.push_back({"A", {1, 3}});
    chart.bars.push_back({"B", {2, 0}});
    const std::string svg = render_stacked_bar_chart(chart);
    const auto y = captured_numbers(svg, R"re(class="segment" x="[0-9.]+" y="([0-9.]+)")re");
    const auto h =
        captured_numbers(svg, R"re(class="segment" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="([0-9.]+)")re");
    REQUIRE(h.size() == 4);  // A: fmac, dram; B: fmac, dram
    CHECK(h[0] > 0);
    CHECK(h[1] == Approx(3 * h[0]).margin(0.02));
    CHECK(h[2] == Approx(2 * h[0]).margin(0.02));
    CHECK(h[3] == 0);
    // A's dram segment sits on its fmac segment: its bottom is fmac's top.
    CHECK(y[1] + h[1] == Approx(y[0]).margin(0.011));
    // Both bars start on the same baseline.
    CHECK(y[0] + h[0] == Approx(y[2] + h[2]).margin(0.011));
    CHECK_THAT(svg, Contains("<title>A: dram = 3</title>"));
}

TEST_CASE("negative and non-finite bar values draw as nothing, and charts are deterministic", "[charts]") {
    StackedBarChart chart;
    chart.components = {"a", "b"};
    chart.bars.push_back({"x", {-5, std::nan("")}});
    chart.bars.push_back({"y", {4, 1}});
    const std::string svg = render_stacked_bar_chart(chart);
    const auto h =
        captured_numbers(svg, R"re(class="segment" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="([0-9.]+)")re");
    REQUIRE(h.size() == 4);
    CHECK(h[0] == 0);
    CHECK(h[1] == 0);
    CHECK(h[2] == Approx(4 * h[3]).margin(0.02));
    CHECK(svg == render_stacked_bar_chart(chart));
    LineChart line = array_chart({8, 16, 32});
    line.series[0].points.push_back({64, std::nan("")});  // skipped, not drawn at y = nan
    const std::string a = render_line_chart(line);
    CHECK(a == render_line_chart(line));
    CHECK_THAT(a, !Contains("nan"));
    CHECK(captured_numbers(a, R"re(class="marker" cx="([0-9.]+)")re").size() == 3);
}

TEST_CASE("series past the eighth colour get another marker shape", "[charts]") {
    LineChart chart;
    for (int i = 0; i < 9; ++i) chart.series.push_back({"s" + std::to_string(i), {{1, 1.0 * i}, {2, 2.0 * i}}});
    const std::string svg = render_line_chart(chart);
    // Series 0 and 8 share the first colour; 0 has circles, 8 must not.
    const auto series_markup = [&](int i) {
        const std::string begin = "<title>s" + std::to_string(i) + ": 1, ";
        const auto at = svg.find(begin);
        return svg.substr(at, svg.find("</g>", at) - at);
    };
    CHECK_THAT(series_markup(0), Contains("<circle class=\"marker\"") && Contains("#0072B2"));
    CHECK_THAT(series_markup(8), !Contains("<circle") && Contains("#0072B2"));
}

TEST_CASE("y is log10 for positive values spanning two decades or more, with ticks at 1, 2 and 5", "[charts]") {
    CHECK(log10_ticks(3, 4000) == std::vector<double>{1, 10, 100, 1000, 10000});
    CHECK(log10_ticks(3, 80) == std::vector<double>{2, 5, 10, 20, 50, 100});
    CHECK(log10_ticks(4.5, 80) == std::vector<double>{2, 5, 10, 20, 50, 100});  // the first tick stays <= lo
    CHECK(log10_ticks(0.02, 0.5) == std::vector<double>{0.02, 0.05, 0.1, 0.2, 0.5});
    CHECK(resolve_y_scale(YScale::automatic, {10, 999}) == YScale::linear);
    CHECK(resolve_y_scale(YScale::automatic, {10, 1000}) == YScale::log10);
    CHECK(resolve_y_scale(YScale::automatic, {0, 1000}) == YScale::linear);
    CHECK(resolve_y_scale(YScale::log10, {-1, 1000}) == YScale::linear);
    LineChart chart;
    chart.y_title = "cycles";
    chart.series.push_back({"a", {{1, 10}, {2, 100}, {3, 1000}, {4, 10000}}});
    const std::string svg = render_line_chart(chart);
    CHECK_THAT(svg, Contains("cycles (log scale)"));
    const auto cy = captured_numbers(svg, R"re(class="marker" cx="[0-9.]+" cy="([0-9.]+)")re");
    REQUIRE(cy.size() == 4);
    for (std::size_t i = 1; i < cy.size(); ++i) CHECK(cy[i - 1] - cy[i] == Approx(cy[0] - cy[1]).margin(0.011));
    chart.y_scale = YScale::linear;  // asked for: 10 and 100 nearly meet at the bottom
    const auto ly = captured_numbers(render_line_chart(chart), R"re(class="marker" cx="[0-9.]+" cy="([0-9.]+)")re");
    REQUIRE(ly.size() == 4);
    CHECK((ly[0] - ly[1]) / (ly[0] - ly[3]) == Approx(90.0 / 9990).margin(0.001));
}

TEST_CASE("a series keeps its colour in every chart of a page", "[charts]") {
    SeriesColours colours;
    CHECK(colours.slots({"array", "dram"}) == std::vector<std::size_t>{0, 1});
    CHECK(colours.slots({"dram", "vector", "array"}) == std::vector<std::size_t>{1, 2, 0});
    StackedBarChart chart;
    chart.components = {"dram", "vector"};
    chart.bars.push_back({"A", {1, 1}});
    chart.colours = colours.slots(chart.components);
    const std::string svg = render_stacked_bar_chart(chart);
    const std::string dram(palette_colour(1)), vector(palette_colour(2));
    CHECK_THAT(svg, Contains("fill=\"" + dram + "\"><title>A: dram = 1</title>"));
    CHECK_THAT(svg, Contains("fill=\"" + vector + "\"><title>A: vector = 1</title>"));
    CHECK_THAT(svg, !Contains(std::string(palette_colour(0))));  // array's colour is not drawn
}
