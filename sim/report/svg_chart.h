// SPDX-License-Identifier: MIT
// A small SVG chart writer: line charts with several series and stacked bar charts, as
// standalone SVG documents that can also be inlined in HTML. Plain C++, std only; the output is
// deterministic (fixed number formatting, no time stamps, no random ids).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fastsim::charts {

/// `text` with & < > " ' replaced by XML entities: safe in element content and in attribute
/// values (single- or double-quoted). Also valid HTML.
std::string xml_escape(std::string_view text);

/// Tick values for a linear axis covering [lo, hi]: multiples of a step 1, 2 or 5 x 10^k chosen
/// so that there are at most about `max_intervals` intervals; the first tick is <= lo and the
/// last >= hi. lo == hi gives a range around the value (0 -> [0, 1]). Requires lo <= hi, both
/// finite, max_intervals >= 1.
std::vector<double> nice_ticks(double lo, double hi, int max_intervals = 6);

/// Tick values for a log2 axis covering [lo, hi] (both > 0): the powers of two from
/// 2^floor(log2 lo) to 2^ceil(log2 hi), thinned to every k-th power so there are at most
/// `max_ticks` of them.
std::vector<double> log2_ticks(double lo, double hi, int max_ticks = 9);

/// Tick values for a log10 axis covering [lo, hi] (both > 0): the powers of ten from
/// 10^floor(log10 lo) to 10^ceil(log10 hi), thinned to every k-th power so there are at most
/// `max_ticks` of them; over two decades or fewer, 1, 2 and 5 x each power from the last at or
/// below lo to the first at or above hi.
std::vector<double> log10_ticks(double lo, double hi, int max_ticks = 8);

/// A tick label: integers up to 10^4 as they are, larger magnitudes with a k / M / G / T suffix
/// (10^3, 10^6, 10^9, 10^12), fractions with at most 4 significant digits; no trailing zeros.
std::string tick_label(double value);

/// How x values are placed.
enum class XScale {
    automatic,  ///< categorical if categories are given, else log2 when all x > 0 and max/min >= 8, else linear
    linear,
    log2,
    categorical,  ///< evenly spaced slots; a point's x is its index into LineChart::categories
};

/// How y values are placed on a line chart.
enum class YScale {
    automatic,  ///< log10 when every y > 0 and max/min >= 100 (two decades or more), else linear
    linear,
    log10,
};

/// Picks the y scale for `automatic` as documented there; log10 without a positive y is linear.
YScale resolve_y_scale(YScale requested, const std::vector<double>& ys);

/// Maps data values onto pixels along one axis, linearly or linearly in log2(value).
class AxisMap {
public:
    /// data [lo, hi] onto pixels [pixel_lo, pixel_hi] (pixel_hi may be < pixel_lo, as for y).
    static AxisMap linear(double lo, double hi, double pixel_lo, double pixel_hi);
    /// log2(data) from [log2 lo, log2 hi] onto the pixels; lo and hi must be > 0 (a log10
    /// axis maps the same way: the log's base cancels).
    static AxisMap log2(double lo, double hi, double pixel_lo, double pixel_hi);

    /// Pixel of `value` (for a log map, value must be > 0).
    [[nodiscard]] double operator()(double value) const;

private:
    AxisMap(bool log, double lo, double hi, double pixel_lo, double pixel_hi)
        : m_log(log), m_lo(lo), m_hi(hi), m_pixel_lo(pixel_lo), m_pixel_hi(pixel_hi) {}
    bool m_log;
    double m_lo, m_hi, m_pixel_lo, m_pixel_hi;
};

/// Picks the scale for `automatic`: categorical if `has_categories`, else log2 when every x is
/// > 0 and max/min >= 8, else linear. Any other `requested` scale is returned as it is.
XScale resolve_x_scale(XScale requested, const std::vector<double>& xs, bool has_categories);

/// Overall size of a chart in pixels; charts with many bars or long labels grow beyond it.
struct ChartSize {
    double width_px = 640;
    double height_px = 400;
};

/// Palette slots by series name for the plots of one page, so a series keeps its colour in
/// every plot: each new name takes the next slot, a name seen before its slot again.
class SeriesColours {
public:
    std::size_t slot(const std::string& name);
    /// slot() of each name, in order (a chart's `colours`).
    std::vector<std::size_t> slots(const std::vector<std::string>& names);

private:
    std::vector<std::string> m_names;
};

struct LinePoint {
    double x = 0;  ///< data value, or the category index on a categorical axis
    double y = 0;
};

struct LineSeries {
    std::string name;               ///< legend text
    std::vector<LinePoint> points;  ///< joined in the order given; non-finite y values are skipped
    bool joined = true;             ///< false: markers only (a scatter of designs)
};

struct LineChart {
    std::string title;
    std::string x_title;                  ///< with its unit, e.g. "array rows (PEs)"
    std::string y_title;                  ///< with its unit, e.g. "energy (µJ)"
    std::string legend_title;             ///< shown above the legend entries; may be empty
    std::vector<std::string> categories;  ///< labels of a categorical x axis (point x = index)
    std::vector<LineSeries> series;
    XScale x_scale = XScale::automatic;
    YScale y_scale = YScale::automatic;
    bool y_from_zero = true;           ///< start a linear y axis at 0 when all y >= 0
    std::vector<std::size_t> colours;  ///< palette slot per series (SeriesColours); empty: its index
};

/// A standalone SVG document (root <svg> with xmlns) of the chart: axes with ticks and titles
/// (a log axis says so in its title), one coloured line with markers per series (marker shapes cycle too, so series stay apart in
/// grey print and past the 8 colours), a legend. Each marker has a <title> "series: x, y" tooltip. A chart with no
/// finite point shows "no data".
std::string render_line_chart(const LineChart& chart, const ChartSize& size = {});

struct Bar {
    std::string label;           ///< under the bar (rotated when bars are many or labels long)
    std::vector<double> values;  ///< one per component, >= 0; negative or non-finite values draw as 0
};

struct StackedBarChart {
    std::string title;
    std::string x_title;
    std::string y_title;                  ///< with its unit
    std::vector<std::string> components;  ///< legend entries, bottom of the stack first
    std::vector<Bar> bars;
    std::vector<std::size_t> colours;  ///< palette slot per component (SeriesColours); empty: its index
};

/// A standalone SVG document: one bar per entry, its components stacked bottom-up in legend
/// order, each segment a <rect class="segment"> whose height is proportional to its value and
/// which carries a <title> "bar: component = value" tooltip. Width grows with the number of bars.
std::string render_stacked_bar_chart(const StackedBarChart& chart, const ChartSize& size = {});

/// One span of a timeline row, [start, end] in the x axis's unit.
struct TimelineSpan {
    std::size_t row = 0;        ///< index into TimelineChart::rows
    std::size_t component = 0;  ///< index into TimelineChart::components: its colour
    double start = 0, end = 0;  ///< drawn when both are finite and end >= start
    std::string label{};        ///< written inside the span where it fits, and in its tooltip
};

struct TimelineChart {
    std::string title;
    std::string x_title;                  ///< with its unit, e.g. "time (ms)"
    std::vector<std::string> rows;        ///< top to bottom
    std::vector<std::string> components;  ///< legend entries
    std::vector<TimelineSpan> spans;
    std::vector<std::size_t> colours;  ///< palette slot per component (SeriesColours); empty: its index
};

/// A standalone SVG document: a Gantt chart with one row per entry of `rows` and an x axis from
/// 0 to the latest end. Each drawn span is a <rect class="span"> from x(start) to x(end) (at
/// least half a pixel wide) in its component's colour, outlined by a white hairline, with a
/// <title> tooltip "row: component label, start – end". Height grows with the number of rows.
std::string render_timeline_chart(const TimelineChart& chart, const ChartSize& size = {});

/// The colour of series or component `index` (a fixed colour-blind-safe palette, cycled).
std::string_view palette_colour(std::size_t index);

}  // namespace fastsim::charts
