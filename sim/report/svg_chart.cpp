// SPDX-License-Identifier: MIT
#include "report/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace fastsim::charts {
namespace {

constexpr double kFontPx = 12;  ///< tick labels, legend, axis titles
constexpr double kTitleFontPx = 15;
constexpr double kCharWidthEm = 0.6;        ///< estimated advance of one character, in em (sans-serif)
constexpr std::size_t kMaxLabelChars = 32;  ///< longer category / bar labels are cut with "…"

/// A pixel coordinate with two decimals ("-0.00" printed as "0.00"), so output is deterministic.
std::string px(double value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", value);
    std::string s = buf;
    return s == "-0.00" ? "0.00" : s;
}

/// Number of characters (UTF-8 code points) in `text`.
std::size_t char_count(std::string_view text) {
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// Estimated width of `text` in pixels at `font_px`.
double text_width(std::string_view text, double font_px = kFontPx) {
    return static_cast<double>(char_count(text)) * font_px * kCharWidthEm;
}

/// `text` cut to `max_chars` code points (the last one replaced by "…") if longer.
std::string shorten(const std::string& text, std::size_t max_chars = kMaxLabelChars) {
    if (char_count(text) <= max_chars) return text;
    std::size_t chars = 0, i = 0;
    for (; i < text.size(); ++i)
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && ++chars == max_chars) break;
    return text.substr(0, i) + "…";
}

double power_of_ten(int exponent) {
    double p = 1;
    for (int i = 0; i < std::abs(exponent); ++i) p *= 10;
    return p;
}

/// Builds an SVG document; every text goes through xml_escape.
class SvgBuilder {
public:
    SvgBuilder(double width, double height, const std::string& title) {
        m_out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + px(width) + "\" height=\"" +
                 px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) +
                 "\" role=\"img\" font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" font-size=\"" +
                 px(kFontPx) + "\">\n";
        m_out += "<title>" + xml_escape(title) + "</title>\n";
        m_out += "<rect x=\"0\" y=\"0\" width=\"" + px(width) + "\" height=\"" + px(height) + "\" fill=\"#ffffff\"/>\n";
        if (!title.empty()) text(width / 2, 22, title, "middle", kTitleFontPx, "font-weight=\"bold\"");
    }

    void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1) {
        m_out += "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) +
                 "\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + px(width) + "\"/>\n";
    }

    /// Text anchored at (x, y) (baseline); `extra` are further attributes, already escaped.
    void text(double x, double y, const std::string& content, std::string_view anchor, double font_px = kFontPx,
              const std::string& extra = "") {
        m_out += "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + std::string(anchor) + "\"";
        if (font_px != kFontPx) m_out += " font-size=\"" + px(font_px) + "\"";
        if (!extra.empty()) m_out += " " + extra;
        m_out += ">" + xml_escape(content) + "</text>\n";
    }

    /// Text rotated by `degrees` about its anchor point.
    void rotated_text(double x, double y, const std::string& content, std::string_view anchor, double degrees) {
        text(x, y, content, anchor, kFontPx, "transform=\"rotate(" + px(degrees) + " " + px(x) + " " + px(y) + ")\"");
    }

    void raw(const std::string& markup) { m_out += markup; }

    std::string finish() { return m_out + "</svg>\n"; }

private:
    std::string m_out;
};

constexpr std::size_t kPaletteSize = 8;

/// A marker centred at (x, y) for series `index`: circle, square, triangle, diamond in turn,
/// shifted by one each time the palette's colours repeat, so no two of 32 series look alike.
std::string marker(std::size_t index, double x, double y, std::string_view colour, std::string_view css_class) {
    const std::string cls = "class=\"" + std::string(css_class) + "\" ";
    const std::string fill = " fill=\"" + std::string(colour) + "\"";
    switch ((index + index / kPaletteSize) % 4) {
    case 0: return "<circle " + cls + "cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"3.50\"" + fill + "/>";
    case 1:
        return "<rect " + cls + "x=\"" + px(x - 3.2) + "\" y=\"" + px(y - 3.2) + "\" width=\"6.40\" height=\"6.40\"" +
               fill + "/>";
    case 2:
        return "<path " + cls + "d=\"M" + px(x) + "," + px(y - 4.2) + " L" + px(x + 4) + "," + px(y + 3) + " L" +
               px(x - 4) + "," + px(y + 3) + " Z\"" + fill + "/>";
    default:
        return "<path " + cls + "d=\"M" + px(x) + "," + px(y - 4.5) + " L" + px(x + 4.5) + "," + px(y) + " L" + px(x) +
               "," + px(y + 4.5) + " L" + px(x - 4.5) + "," + px(y) + " Z\"" + fill + "/>";
    }
}

/// Horizontal grid lines, y tick labels and the rotated y title of a plot area.
void draw_y_axis(SvgBuilder& svg, const std::vector<double>& ticks, const AxisMap& y, double x0, double x1,
                 const std::string& title, double title_x, double y_mid) {
    for (const double t : ticks) {
        const double py = y(t);
        svg.line(x0, py, x1, py, "#e3e3e3");
        svg.text(x0 - 6, py + 4, tick_label(t), "end");
    }
    svg.rotated_text(title_x, y_mid, title, "middle", -90);
}

/// Palette slot of entry `i`: `colours[i]`, or `i` when the chart gives none.
std::size_t slot_of(const std::vector<std::size_t>& colours, std::size_t i) {
    return i < colours.size() ? colours[i] : i;
}

/// Legend entries from (x, y) downwards; returns nothing, draws a line+marker or a swatch each.
void draw_legend(SvgBuilder& svg, double x, double y, const std::string& title, const std::vector<std::string>& names,
                 bool swatches, const std::vector<std::size_t>& colours, bool lines = true) {
    if (!title.empty()) {
        svg.text(x, y, title, "start", kFontPx, "font-weight=\"bold\"");
        y += 18;
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::size_t slot = slot_of(colours, i);
        const std::string colour(palette_colour(slot));
        if (swatches) {
            svg.raw("<rect class=\"legend-swatch\" x=\"" + px(x) + "\" y=\"" + px(y - 10) +
                    "\" width=\"12.00\" height=\"12.00\" fill=\"" + colour + "\"/>\n");
        } else {
            if (lines) svg.line(x, y - 4, x + 22, y - 4, colour, 2);
            svg.raw(marker(slot, x + 11, y - 4, colour, "legend-marker") + "\n");
        }
        svg.text(x + 28, y, names[i], "start");
        y += 18;
    }
}

double legend_width(const std::string& title, const std::vector<std::string>& names) {
    double w = text_width(title) * 1.15;  // the title is bold
    for (const auto& n : names) w = std::max(w, 28 + text_width(n));
    return w;
}

/// Bottom-axis category labels centred on `centres`: horizontal when they fit their slot,
/// else rotated by -45 degrees. Returns the height they take below the axis line.
double category_labels_height(const std::vector<std::string>& labels, double slot_px, bool& rotate) {
    double widest = 0;
    for (const auto& l : labels) widest = std::max(widest, text_width(shorten(l)));
    rotate = widest > slot_px - 4;
    return rotate ? widest * 0.71 + 18 : 18;
}

void draw_category_labels(SvgBuilder& svg, const std::vector<std::string>& labels, const std::vector<double>& centres,
                          double axis_y, bool rotate) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
        const std::string label = shorten(labels[i]);
        if (rotate)
            svg.rotated_text(centres[i] + 4, axis_y + 12, label, "end", -45);
        else
            svg.text(centres[i], axis_y + 16, label, "middle");
    }
}

std::string escaped_title_element(const std::string& text) { return "<title>" + xml_escape(text) + "</title>"; }

}  // namespace

std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::vector<double> nice_ticks(double lo, double hi, int max_intervals) {
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) return {0, 1};
    if (lo == hi) {
        const double half_span = lo == 0 ? 0.5 : std::abs(lo) * 0.5;
        if (lo == 0) {
            hi = 1;
        } else {
            lo -= half_span;
            hi += half_span;
        }
    }
    max_intervals = std::max(max_intervals, 1);
    // A span no double holds (e.g. -1e308 to 1e308), or one below the smallest normal step:
    // the two ends are the only ticks.
    if (!std::isfinite(hi - lo) || (hi - lo) / max_intervals < 1e-300) return {lo, hi};
    // 1. Raw step from the range, then rounded up to 1, 2 or 5 x 10^e.
    const double raw = (hi - lo) / max_intervals;
    const int e = static_cast<int>(std::floor(std::log10(raw)));
    const double norm = raw / (e >= 0 ? power_of_ten(e) : 1 / power_of_ten(-e));
    int multiple = norm <= 1.0000001 ? 1 : norm <= 2.0000001 ? 2 : norm <= 5.0000001 ? 5 : 10;
    // 2. Tick k is k * multiple * 10^e; dividing by an exact power of ten keeps 0.3 as 0.3.
    const auto value = [&](long long k) {
        const double whole = static_cast<double>(k) * multiple;
        return e >= 0 ? whole * power_of_ten(e) : whole / power_of_ten(-e);
    };
    const double step = value(1);
    if (!(step > 0) || !std::isfinite(lo / step) || !std::isfinite(hi / step)) return {lo, hi};
    const auto first = static_cast<long long>(std::floor(lo / step + 1e-9));
    const auto last = static_cast<long long>(std::ceil(hi / step - 1e-9));
    std::vector<double> ticks;
    for (long long k = first; k <= last; ++k) ticks.push_back(value(k));
    if (ticks.size() < 2) ticks.push_back(value(last + 1));
    return ticks;
}

std::vector<double> log2_ticks(double lo, double hi, int max_ticks) {
    if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi)) return {1, 2};
    const int first = std::ilogb(lo);
    int last = std::ilogb(hi);
    if (std::ldexp(1.0, last) < hi) ++last;
    if (last == first) ++last;
    const int count = last - first + 1;
    const int limit = std::max(max_ticks, 2);
    const int stride = (count + limit - 1) / limit;
    std::vector<double> ticks;
    int e = first;
    for (; e < last; e += stride) ticks.push_back(std::ldexp(1.0, e));
    ticks.push_back(std::ldexp(1.0, e));
    return ticks;
}

std::vector<double> log10_ticks(double lo, double hi, int max_ticks) {
    if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi)) return {1, 10};
    const int first = static_cast<int>(std::floor(std::log10(lo) + 1e-12));
    int last = static_cast<int>(std::ceil(std::log10(hi) - 1e-12));
    if (last == first) ++last;
    const auto power = [](int e) { return e >= 0 ? power_of_ten(e) : 1 / power_of_ten(-e); };
    std::vector<double> ticks;
    if (last - first <= 2) {  // few decades: 1, 2 and 5 of each, from the last <= lo to the first >= hi
        std::vector<double> candidates;
        for (int e = first; e < last; ++e)
            for (const double m : {1.0, 2.0, 5.0}) candidates.push_back(m * power(e));
        candidates.push_back(power(last));
        std::size_t begin = 0, end = candidates.size() - 1;
        while (begin + 1 < candidates.size() && candidates[begin + 1] <= lo) ++begin;
        while (end > begin + 1 && candidates[end - 1] >= hi) --end;
        return {candidates.begin() + static_cast<std::ptrdiff_t>(begin),
                candidates.begin() + static_cast<std::ptrdiff_t>(end) + 1};
    }
    const int count = last - first + 1;
    const int limit = std::max(max_ticks, 2);
    const int stride = (count + limit - 1) / limit;
    int e = first;
    for (; e < last; e += stride) ticks.push_back(power(e));
    ticks.push_back(power(e));
    return ticks;
}

std::string tick_label(double value) {
    char buf[48];
    const double magnitude = std::abs(value);
    if (magnitude >= 1e4 && std::isfinite(value)) {
        static constexpr std::array<std::pair<double, char>, 4> kSuffixes{
            {{1e12, 'T'}, {1e9, 'G'}, {1e6, 'M'}, {1e3, 'k'}}};
        for (const auto& [scale, suffix] : kSuffixes)
            if (magnitude >= scale) {
                std::snprintf(buf, sizeof buf, "%.4g%c", value / scale, suffix);
                return buf;
            }
    }
    if (value == std::round(value) && std::isfinite(value)) {
        std::snprintf(buf, sizeof buf, "%.0f", value);
        return std::string(buf) == "-0" ? "0" : buf;
    }
    std::snprintf(buf, sizeof buf, "%.4g", value);
    return buf;
}

AxisMap AxisMap::linear(double lo, double hi, double pixel_lo, double pixel_hi) {
    return {false, lo, hi, pixel_lo, pixel_hi};
}

AxisMap AxisMap::log2(double lo, double hi, double pixel_lo, double pixel_hi) {
    return {true, std::log2(lo), std::log2(hi), pixel_lo, pixel_hi};
}

double AxisMap::operator()(double value) const {
    const double v = m_log ? std::log2(value) : value;
    if (m_hi == m_lo) return (m_pixel_lo + m_pixel_hi) / 2;
    // Halved first, so a range such as -1e308 … 1e308 does not overflow to inf.
    const double fraction = (v / 2 - m_lo / 2) / (m_hi / 2 - m_lo / 2);
    return m_pixel_lo + (std::isfinite(fraction) ? fraction : 0.5) * (m_pixel_hi - m_pixel_lo);
}

XScale resolve_x_scale(XScale requested, const std::vector<double>& xs, bool has_categories) {
    if (requested == XScale::categorical) return requested;
    const bool positive = !xs.empty() && std::all_of(xs.begin(), xs.end(), [](double x) { return x > 0; });
    if (requested == XScale::log2) return positive ? XScale::log2 : XScale::linear;
    if (requested == XScale::linear) return requested;
    if (has_categories) return XScale::categorical;
    if (!positive) return XScale::linear;
    const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
    return *hi / *lo >= 8 ? XScale::log2 : XScale::linear;
}

YScale resolve_y_scale(YScale requested, const std::vector<double>& ys) {
    const bool positive = !ys.empty() && std::all_of(ys.begin(), ys.end(), [](double y) { return y > 0; });
    if (requested == YScale::linear || !positive) return YScale::linear;
    if (requested == YScale::log10) return requested;
    const auto [lo, hi] = std::minmax_element(ys.begin(), ys.end());
    return *hi / *lo >= 100 ? YScale::log10 : YScale::linear;
}

std::size_t SeriesColours::slot(const std::string& name) {
    const auto it = std::find(m_names.begin(), m_names.end(), name);
    if (it != m_names.end()) return static_cast<std::size_t>(it - m_names.begin());
    m_names.push_back(name);
    return m_names.size() - 1;
}

std::vector<std::size_t> SeriesColours::slots(const std::vector<std::string>& names) {
    std::vector<std::size_t> out;
    for (const std::string& n : names) out.push_back(slot(n));
    return out;
}

std::string_view palette_colour(std::size_t index) {
    // Okabe & Ito's colour-blind-safe palette, yellow last (weak on white).
    static constexpr std::array<std::string_view, kPaletteSize> kPalette{"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                                         "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
    return kPalette[index % kPalette.size()];
}

std::string render_line_chart(const LineChart& chart, const ChartSize& size) {
    // 1. Finite points only; their x and y ranges.
    std::vector<double> xs, ys;
    for (const auto& s : chart.series)
        for (const auto& p : s.points)
            if (std::isfinite(p.x) && std::isfinite(p.y)) {
                xs.push_back(p.x);
                ys.push_back(p.y);
            }
    const XScale scale = resolve_x_scale(chart.x_scale, xs, !chart.categories.empty());

    // 2. Layout: legend on the right, category labels may need room below.
    std::vector<std::string> names;
    for (const auto& s : chart.series) names.push_back(s.name);
    const bool has_legend = !(names.size() == 1 && names[0].empty()) && !names.empty();
    const double legend_px = has_legend ? legend_width(chart.legend_title, names) + 24 : 0;
    const double width = size.width_px + legend_px;
    const double x0 = 72, x1 = width - 20 - legend_px, top = 40;
    bool rotate = false;
    const double slot = chart.categories.empty() ? 0 : (x1 - x0) / static_cast<double>(chart.categories.size());
    const double label_px = scale == XScale::categorical ? category_labels_height(chart.categories, slot, rotate) : 18;
    const double height = size.height_px + std::max(0.0, label_px - 18);
    const double y1 = height - 34 - label_px;
    SvgBuilder svg(width, height, chart.title);
    if (xs.empty()) {
        svg.text((x0 + x1) / 2, (top + y1) / 2, "no data", "middle");
        return svg.finish();
    }

    // 3. Axes: y from nice ticks, x by its scale (numeric axes inset so end points clear the frame).
    const auto [ymin_it, ymax_it] = std::minmax_element(ys.begin(), ys.end());
    const bool log_y = resolve_y_scale(chart.y_scale, ys) == YScale::log10;
    const double ylo = chart.y_from_zero && *ymin_it >= 0 ? 0 : *ymin_it;
    const std::vector<double> yticks = log_y ? log10_ticks(*ymin_it, *ymax_it) : nice_ticks(ylo, *ymax_it, 5);
    const AxisMap y = log_y ? AxisMap::log2(yticks.front(), yticks.back(), y1, top)
                            : AxisMap::linear(yticks.front(), yticks.back(), y1, top);
    draw_y_axis(svg, yticks, y, x0, x1, chart.y_title + (log_y ? " (log scale)" : ""), 18, (top + y1) / 2);
    constexpr double kInset = 12;
    std::vector<double> xticks;
    AxisMap x = AxisMap::linear(0, 1, x0, x1);
    if (scale == XScale::categorical) {
        std::vector<double> centres;
        for (std::size_t i = 0; i < chart.categories.size(); ++i)
            centres.push_back(x0 + (static_cast<double>(i) + 0.5) * slot);
        x = AxisMap::linear(0, static_cast<double>(chart.categories.size()) - 1, centres.front(), centres.back());
        draw_category_labels(svg, chart.categories, centres, y1, rotate);
        for (const double c : centres) svg.line(c, y1, c, y1 + 4, "#444444");
    } else {
        const auto [xmin_it, xmax_it] = std::minmax_element(xs.begin(), xs.end());
        xticks = scale == XScale::log2 ? log2_ticks(*xmin_it, *xmax_it) : nice_ticks(*xmin_it, *xmax_it);
        x = scale == XScale::log2 ? AxisMap::log2(xticks.front(), xticks.back(), x0 + kInset, x1 - kInset)
                                  : AxisMap::linear(xticks.front(), xticks.back(), x0 + kInset, x1 - kInset);
        for (const double t : xticks) {
            svg.line(x(t), y1, x(t), y1 + 4, "#444444");
            svg.text(x(t), y1 + 16, tick_label(t), "middle");
        }
    }
    svg.line(x0, y1, x1, y1, "#444444");
    svg.line(x0, top, x0, y1, "#444444");
    svg.text((x0 + x1) / 2, height - 12, chart.x_title + (scale == XScale::log2 ? " (log2 scale)" : ""), "middle");

    // 4. Series: a line through the finite points, then the markers with tooltips.
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
        const auto& s = chart.series[i];
        const std::size_t colour_slot = slot_of(chart.colours, i);
        const std::string colour(palette_colour(colour_slot));
        std::string path;
        for (const auto& p : s.points)
            if (std::isfinite(p.x) && std::isfinite(p.y))
                path += (path.empty() ? "M" : " L") + px(x(p.x)) + "," + px(y(p.y));
        svg.raw("<g class=\"series\">\n");
        if (!path.empty() && s.joined)
            svg.raw("<path class=\"line\" d=\"" + path + "\" fill=\"none\" stroke=\"" + colour +
                    "\" stroke-width=\"2.00\"/>\n");
        for (const auto& p : s.points) {
            if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
            const std::string x_text =
                scale == XScale::categorical && p.x >= 0 && p.x < static_cast<double>(chart.categories.size())
                    ? chart.categories[static_cast<std::size_t>(p.x)]
                    : tick_label(p.x);
            char y_text[32];
            std::snprintf(y_text, sizeof y_text, "%.6g", p.y);
            svg.raw("<g>" + escaped_title_element((s.name.empty() ? "" : s.name + ": ") + x_text + ", " + y_text) +
                    marker(colour_slot, x(p.x), y(p.y), colour, "marker") + "</g>\n");
        }
        svg.raw("</g>\n");
    }
    const bool any_joined =
        std::any_of(chart.series.begin(), chart.series.end(), [](const LineSeries& s) { return s.joined; });
    if (has_legend) draw_legend(svg, x1 + 24, top + 4, chart.legend_title, names, false, chart.colours, any_joined);
    return svg.finish();
}

std::string render_stacked_bar_chart(const StackedBarChart& chart, const ChartSize& size) {
    // 1. Stack totals (negative and non-finite values count as 0).
    const auto drawn = [](double v) { return std::isfinite(v) && v > 0 ? v : 0.0; };
    double tallest = 0;
    std::vector<std::string> labels;
    for (const auto& b : chart.bars) {
        double total = 0;
        for (const double v : b.values) total += drawn(v);
        tallest = std::max(tallest, total);
        labels.push_back(b.label);
    }

    // 2. Layout: at least 22 px per bar; labels rotate when they do not fit their slot.
    const double legend_px = legend_width("", chart.components) + 24;
    constexpr double kMinSlotPx = 22;
    const double plot_px = std::max(size.width_px - 92, kMinSlotPx * static_cast<double>(chart.bars.size()));
    const double x0 = 72, x1 = x0 + plot_px, top = 40;
    const double width = x1 + 20 + legend_px;
    const double slot = chart.bars.empty() ? plot_px : plot_px / static_cast<double>(chart.bars.size());
    bool rotate = false;
    const double label_px = category_labels_height(labels, slot, rotate);
    const double height = size.height_px + std::max(0.0, label_px - 18);
    const double y1 = height - 34 - label_px;
    SvgBuilder svg(width, height, chart.title);
    if (chart.bars.empty()) {
        svg.text((x0 + x1) / 2, (top + y1) / 2, "no data", "middle");
        return svg.finish();
    }
    const std::vector<double> yticks = nice_ticks(0, tallest, 5);
    const AxisMap y = AxisMap::linear(yticks.front(), yticks.back(), y1, top);
    draw_y_axis(svg, yticks, y, x0, x1, chart.y_title, 18, (top + y1) / 2);

    // 3. Bars: segments bottom-up in component order; height = value / axis range x plot height.
    std::vector<double> centres;
    const double bar_px = std::min(slot * 0.7, 48.0);
    for (std::size_t b = 0; b < chart.bars.size(); ++b) {
        const Bar& bar = chart.bars[b];
        const double centre = x0 + (static_cast<double>(b) + 0.5) * slot;
        centres.push_back(centre);
        double base = 0;
        svg.raw("<g class=\"bar\">\n");
        for (std::size_t c = 0; c < bar.values.size(); ++c) {
            const double v = drawn(bar.values[c]);
            const double top_px = y(base + v), bottom_px = y(base);
            char value_text[32];
            std::snprintf(value_text, sizeof value_text, "%.6g", bar.values[c]);
            const std::string component =
                c < chart.components.size() ? chart.components[c] : "component " + std::to_string(c);
            svg.raw("<rect class=\"segment\" x=\"" + px(centre - bar_px / 2) + "\" y=\"" + px(top_px) + "\" width=\"" +
                    px(bar_px) + "\" height=\"" + px(bottom_px - top_px) + "\" fill=\"" +
                    std::string(palette_colour(slot_of(chart.colours, c))) + "\">" +
                    escaped_title_element(bar.label + ": " + component + " = " + value_text) + "</rect>\n");
            base += v;
        }
        svg.raw("</g>\n");
    }
    draw_category_labels(svg, labels, centres, y1, rotate);
    svg.line(x0, y1, x1, y1, "#444444");
    svg.line(x0, top, x0, y1, "#444444");
    svg.text((x0 + x1) / 2, height - 12, chart.x_title, "middle");
    draw_legend(svg, x1 + 24, top + 4, "", chart.components, true, chart.colours);
    return svg.finish();
}

std::string render_timeline_chart(const TimelineChart& chart, const ChartSize& size) {
    // 1. The spans drawn and the latest end.
    const auto drawn = [&](const TimelineSpan& s) {
        return s.row < chart.rows.size() && std::isfinite(s.start) && std::isfinite(s.end) && s.end >= s.start;
    };
    double latest = 0;
    bool any = false;
    for (const TimelineSpan& s : chart.spans)
        if (drawn(s)) {
            latest = std::max(latest, s.end);
            any = true;
        }

    // 2. Layout: row labels left, legend right; rows 14 to 40 px high, filling the nominal height.
    double label_px = 0;
    for (const std::string& r : chart.rows) label_px = std::max(label_px, text_width(shorten(r)));
    const double legend_px = legend_width("", chart.components) + 24;
    const double x0 = label_px + 20, x1 = x0 + std::max(size.width_px - 92, 200.0), top = 40;
    const double rows = static_cast<double>(std::max<std::size_t>(chart.rows.size(), 1));
    const double row_px = std::clamp((size.height_px - 92) / rows, 14.0, 40.0);
    const double y1 = top + rows * row_px;
    const double width = x1 + 20 + legend_px, height = y1 + 52;
    SvgBuilder svg(width, height, chart.title);
    if (!any) {
        svg.text((x0 + x1) / 2, (top + y1) / 2, "no data", "middle");
        return svg.finish();
    }
    const std::vector<double> xticks = nice_ticks(0, latest, 10);
    const AxisMap x = AxisMap::linear(xticks.front(), xticks.back(), x0, x1);
    for (const double t : xticks) {
        svg.line(x(t), top, x(t), y1, "#e3e3e3");
        svg.line(x(t), y1, x(t), y1 + 4, "#444444");
        svg.text(x(t), y1 + 16, tick_label(t), "middle");
    }
    for (std::size_t r = 0; r < chart.rows.size(); ++r)
        svg.text(x0 - 8, top + (static_cast<double>(r) + 0.5) * row_px + 4, shorten(chart.rows[r]), "end");

    // 3. Spans; a label goes inside when it fits, in white on the darker colours.
    constexpr double kLabelFontPx = 10;
    for (const TimelineSpan& s : chart.spans) {
        if (!drawn(s)) continue;
        const double left = x(s.start), span_px = std::max(x(s.end) - left, 0.5);
        const std::size_t slot = slot_of(chart.colours, s.component);
        const double row_top = top + static_cast<double>(s.row) * row_px + 2;
        const std::string component = s.component < chart.components.size()
                                          ? chart.components[s.component]
                                          : "component " + std::to_string(s.component);
        char range[64];
        std::snprintf(range, sizeof range, "%.6g – %.6g", s.start, s.end);
        svg.raw("<rect class=\"span\" x=\"" + px(left) + "\" y=\"" + px(row_top) + "\" width=\"" + px(span_px) +
                "\" height=\"" + px(row_px - 4) + "\" fill=\"" + std::string(palette_colour(slot)) +
                "\" stroke=\"#ffffff\" stroke-width=\"0.50\">" +
                escaped_title_element(chart.rows[s.row] + ": " + component + (s.label.empty() ? "" : " " + s.label) +
                                      ", " + range) +
                "</rect>\n");
        if (!s.label.empty() && text_width(s.label, kLabelFontPx) + 4 <= span_px && row_px >= 14) {
            const std::size_t colour = slot % kPaletteSize;
            const bool light = colour == 1 || colour == 5 || colour == 7;  // orange, sky blue, yellow
            svg.text(left + span_px / 2, row_top + (row_px - 4) / 2 + 3.5, s.label, "middle", kLabelFontPx,
                     light ? "fill=\"#000000\"" : "fill=\"#ffffff\"");
        }
    }
    svg.line(x0, y1, x1, y1, "#444444");
    svg.line(x0, top, x0, y1, "#444444");
    svg.text((x0 + x1) / 2, height - 12, chart.x_title, "middle");
    draw_legend(svg, x1 + 24, top + 4, "", chart.components, true, chart.colours);
    return svg.finish();
}

}  // namespace fastsim::charts
