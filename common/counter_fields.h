// SPDX-License-Identifier: MIT
// Counter structs declared once: a struct of 64-bit counters and, beside it, its field list
// (one CounterField per member, in report order). The list drives the struct's arithmetic
// (add_counters, subtract_counters, scale_counters, equal_counters) and the reports' JSON keys,
// CSV columns and titles, so a counter is named in its struct, its field list and the code
// that counts it, and nowhere else.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/checked.h"

namespace fastsim {

/// What a counter counts. A phase's report row (layers.csv, report.json) lists the work
/// counters, then utilisation_percent, then the action counters.
enum class CounterKind : std::uint8_t {
    work,    ///< work done or time taken: MACs, tiles, cycles, folds
    action,  ///< an action energy charges for, each one alike: PE passes, converter ops, SRAM bits
};

/// Where the reports show a counter.
enum class CounterShow : std::uint8_t {
    hidden,    ///< summed and compared only (energy or a derived value uses it)
    detail,    ///< a column of layers.csv and report.json's phases, left out of `fastsim report`'s layer table
    headline,  ///< a column of layers.csv, report.json's phases and `fastsim report`'s layer table
};

/// How the reports name and show one counter.
struct CounterInfo {
    std::string_view
        name;  ///< JSON key and CSV column: snake_case, ending in its unit (_cycles, _bits) unless it is one (macs, tiles)
    std::string_view title;  ///< for people, with the unit: "SRAM stall cycles"
    CounterKind kind = CounterKind::work;
    CounterShow show = CounterShow::hidden;
};

/// One member of the counter struct `Counters` in its field list.
template <typename Counters>
struct CounterField {
    std::uint64_t Counters::*member;
    CounterInfo info;
};

/// `to += from`, field by field; SizeOverflow naming `quantity` if a sum leaves 64 bits.
template <typename Counters, typename Fields>
void add_counters(Counters& to, const Counters& from, const Fields& fields, const char* quantity) {
    for (const auto& f : fields) checked_accumulate(to.*f.member, from.*f.member, quantity);
}

/// `to -= from`, field by field: the counts between two readings of counters that only grow,
/// `from` the earlier one (no field of it may exceed `to`'s).
template <typename Counters, typename Fields>
void subtract_counters(Counters& to, const Counters& from, const Fields& fields) {
    for (const auto& f : fields) to.*f.member -= from.*f.member;
}

/// Every field times `times`; SizeOverflow naming `quantity` if a product leaves 64 bits.
template <typename Counters, typename Fields>
void scale_counters(Counters& counters, std::uint64_t times, const Fields& fields, const char* quantity) {
    for (const auto& f : fields) counters.*f.member = checked_mul(counters.*f.member, times, quantity);
}

/// Whether every field of `a` equals `b`'s.
template <typename Counters, typename Fields>
bool equal_counters(const Counters& a, const Counters& b, const Fields& fields) {
    for (const auto& f : fields)
        if (a.*f.member != b.*f.member) return false;
    return true;
}

}  // namespace fastsim
