// SPDX-License-Identifier: MIT
// `fastsim quantize`: numbers in (file or stdin), BFP groups or error statistics out.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "bfp/error_stats.h"
#include "bfp/packing.h"
#include "bfp/quantize.h"
#include "cli/app.h"
#include "cli/logging.h"
#include "cli/numbers.h"
#include "common/input_file.h"
#include "common/errors.h"
#include "output/table.h"

namespace fastsim::cli {
namespace {

namespace po = boost::program_options;

/// Rows of floats; each row's length is checked against the group size by the caller.
struct InputRows {
    std::vector<std::vector<float>> rows;
    std::vector<int> line_numbers;  ///< 1-based source line of each row
};

InputRows read_rows(const std::string& text, const std::string& source) {
    InputRows out;
    std::istringstream in(text);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        for (char& c : line)
            if (c == ',' || c == '\t' || c == '\r') c = ' ';
        std::istringstream tokens(line);
        std::vector<float> row;
        std::string token;
        while (tokens >> token) {
            errno = 0;
            char* end = nullptr;
            const float v = std::strtof(token.c_str(), &end);
            if (end != token.c_str() + token.size())
                throw UserError(source + ":" + std::to_string(number) + ": '" + token + "' is not a number");
            if (errno == ERANGE && std::isinf(v))
                throw UserError(source + ":" + std::to_string(number) + ": '" + token + "' is outside float32's range");
            row.push_back(v);
        }
        if (row.empty()) continue;
        out.rows.push_back(std::move(row));
        out.line_numbers.push_back(number);
    }
    return out;
}

std::string print_float(float v) {
    if (std::isnan(v)) return "nan";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    return buf;
}

std::vector<int> parse_widths(const std::string& text) {
    std::vector<int> widths;
    std::string item;
    std::istringstream in(text);
    while (std::getline(in, item, ','))
        widths.push_back(static_cast<int>(parse_integer_option(item, "--mantissa-bits", 2, 16)));
    if (!text.empty() && text.back() == ',') throw UserError("--mantissa-bits: '" + text + "' ends with a comma");
    if (widths.empty()) throw UserError("--mantissa-bits: expected a width such as 8, or a list such as 2,4,6,8");
    return widths;
}

/// A decimal 0..2^64-1; Boost would wrap "-1" into 2^64-1.
std::uint64_t parse_seed(const std::string& text) { return parse_unsigned_option(text, "--seed", ~std::uint64_t{0}); }

}  // namespace

int quantize_command(const std::vector<std::string>& args) {
    po::options_description options(
        "fastsim quantize [FILE] [options]\n\n"
        "Reads floats (whitespace- or comma-separated, one row per line, each row a\n"
        "whole number of groups) from FILE or stdin. Prints one line per group: the\n"
        "shared exponent (or nan), then the g dequantised values, comma-separated,\n"
        "each exact as float32 (%.9g). With --stats, prints error statistics per\n"
        "mantissa width instead, with the size of the FAST memory layout\n"
        "(packed_bits: exponent plane + mantissa-chunk plane, e + g*ceil(m/2)*3 per group).\n\nOptions");
    std::string input, widths_text, rounding_name, overflow_name, seed_text;
    std::string group_text = "16", exponent_text = "8", bias_text = "0", noise_text = "8", lfsr_text = "16";
    options.add_options()("input", po::value(&input), "input file (default: stdin, also '-')")(
        "group-size,g", po::value(&group_text)->default_value(group_text), "values per shared exponent (1..65536)")(
        "mantissa-bits,m", po::value(&widths_text)->default_value("8"),
        "mantissa width m (2..16); with --stats a list, e.g. 2,4,6,8")(
        "exponent-bits,e", po::value(&exponent_text)->default_value(exponent_text), "shared-exponent width (2..8)")(
        "exponent-bias", po::value(&bias_text)->default_value(bias_text), "per-tensor exponent bias (-200..200)")(
        "rounding,r", po::value(&rounding_name)->default_value("nearest"), "nearest, even, truncate or stochastic")(
        "overflow", po::value(&overflow_name)->default_value("nan"), "nan or saturate")(
        "seed", po::value(&seed_text)->default_value("1"), "LFSR seed, 0..2^64-1 (stochastic rounding)")(
        "noise-bits", po::value(&noise_text)->default_value(noise_text),
        "noise bits added below the LSB (1..lfsr-bits)")("lfsr-bits", po::value(&lfsr_text)->default_value(lfsr_text),
                                                         "LFSR width (2..32)")(
        "stats", "print max/mean absolute and relative error and SQNR per mantissa width");
    po::positional_options_description positional;
    positional.add("input", 1);
    const auto parsed = parse_command_line(args, options, positional);
    if (!parsed) return kSuccess;
    const po::variables_map& vm = *parsed;

    const auto rounding = bfp::parse_rounding(rounding_name);
    if (!rounding)
        throw UserError("--rounding: expected nearest, even, truncate or stochastic, got '" + rounding_name + "'");
    const auto overflow = bfp::parse_overflow(overflow_name);
    if (!overflow) throw UserError("--overflow: expected nan or saturate, got '" + overflow_name + "'");
    const bool stats = vm.count("stats") > 0;
    // The ranges of the config keys these options mirror (bfp.*, docs/config.md#ranges).
    const auto int_option = [](const std::string& text, const char* option, std::int64_t min, std::int64_t max) {
        return static_cast<int>(parse_integer_option(text, option, min, max));
    };
    const int group_size = int_option(group_text, "--group-size", 1, bfp::kMaxGroupSize);
    const int exponent_bits = int_option(exponent_text, "--exponent-bits", 2, bfp::kMaxExponentBits);
    const int exponent_bias = int_option(bias_text, "--exponent-bias", -200, 200);
    const int lfsr_bits = int_option(lfsr_text, "--lfsr-bits", 2, 32);
    const int noise_bits = int_option(noise_text, "--noise-bits", 1, lfsr_bits);
    const std::vector<int> widths = parse_widths(widths_text);
    if (!stats && widths.size() != 1) throw UserError("--mantissa-bits: a list of widths needs --stats");

    std::vector<bfp::Format> formats;
    const bfp::NoiseSpec noise{noise_bits, lfsr_bits, parse_seed(seed_text)};
    for (const int m : widths) {
        const bfp::Format format{group_size, m, exponent_bits, exponent_bias, *overflow};
        if (auto error = bfp::validate(format)) throw UserError("invalid BFP format: " + *error);
        formats.push_back(format);
    }
    if (auto error = bfp::validate(noise)) throw UserError("invalid noise settings: " + *error);

    const bool from_stdin = input.empty() || input == "-";
    const std::string source = from_stdin ? "<stdin>" : input;
    const InputRows in = read_rows(
        from_stdin ? read_input_stream(std::cin, source, "quantize input") : read_input_file(input, "quantize input"),
        source);
    for (std::size_t r = 0; r < in.rows.size(); ++r)
        if (in.rows[r].size() % static_cast<std::size_t>(group_size) != 0)
            throw UserError(source + ":" + std::to_string(in.line_numbers[r]) + ": " +
                            std::to_string(in.rows[r].size()) + " values is not a whole number of groups of " +
                            std::to_string(group_size));
    logger("quantize")->info("{} rows from {}", in.rows.size(), source);

    if (!stats) {
        bfp::Quantizer quantizer(formats.front(), *rounding, noise);
        std::string line;
        for (const auto& row : in.rows) {
            const bfp::BfpTensor t = quantizer.quantize(row.data(), row.size());
            const std::vector<float> values = bfp::dequantize(t);
            for (std::size_t q = 0; q < t.group_count(); ++q) {
                line = t.is_nan_group(q) ? "nan" : std::to_string(t.exponents[q]);
                for (std::size_t j = 0; j < static_cast<std::size_t>(group_size); ++j)
                    line += "," + print_float(values[q * static_cast<std::size_t>(group_size) + j]);
                std::cout << line << '\n';
            }
        }
        return kSuccess;
    }

    std::vector<float> all;
    for (const auto& row : in.rows) all.insert(all.end(), row.begin(), row.end());
    output::Table table({"mantissa_bits", "rounding", "values", "max_abs_error", "mean_abs_error", "max_rel_error",
                         "mean_rel_error", "sqnr_db", "packed_bits", "bits_per_value"});
    for (const auto& format : formats) {
        bfp::Quantizer quantizer(format, *rounding, noise);
        std::vector<float> q;
        q.reserve(all.size());
        std::uint64_t packed_bits = 0;  // FAST layout: exponent plane + mantissa-chunk plane
        for (const auto& row : in.rows) {
            const bfp::BfpTensor t = quantizer.quantize(row.data(), row.size());
            packed_bits += bfp::pack(t).total_bits();
            const auto values = bfp::dequantize(t);
            q.insert(q.end(), values.begin(), values.end());
        }
        const bfp::ErrorStats s = bfp::measure_error(all.data(), q.data(), all.size());
        table.add_row({std::to_string(format.mantissa_bits), std::string(bfp::to_string(*rounding)),
                       std::to_string(s.count), output::Table::scientific(s.max_abs_error),
                       output::Table::scientific(s.mean_abs_error), output::Table::scientific(s.max_rel_error),
                       output::Table::scientific(s.mean_rel_error), output::Table::fixed(s.sqnr_db, 2),
                       std::to_string(packed_bits),
                       output::Table::fixed(all.empty() ? 0.0 : double(packed_bits) / double(all.size()), 3)});
    }
    table.print(std::cout);
    return kSuccess;
}

}  // namespace fastsim::cli
