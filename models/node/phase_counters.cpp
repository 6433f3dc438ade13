// SPDX-License-Identifier: MIT
#include "node/phase_counters.h"

#include <algorithm>
#include <stdexcept>

#include "common/checked.h"

namespace fastsim::node {
namespace {

/// Calls visit(part of a, part of b, field list) for each counter struct of two PhaseCounters,
/// in report order: PhaseCounters' own counters, then those of the structs it holds.
template <typename A, typename B, typename Visit>
void for_each_part(A& a, B& b, Visit&& visit) {
    visit(a, b, kPhaseCounterFields);
    visit(a.conversion, b.conversion, converter::kConversionCostFields);
    visit(a.array, b.array, fmac::kArrayCounterFields);
    visit(a.traffic, b.traffic, memory::kTrafficFields);
    visit(a.vector, b.vector, vector::kVectorUnitCountFields);
}

}  // namespace

PhaseCounters& PhaseCounters::operator+=(const PhaseCounters& o) {
    for_each_part(*this, o, [](auto& to, const auto& from, const auto& fields) {
        add_counters(to, from, fields, "a counter of the phases");
    });
    return *this;
}

PhaseCounters PhaseCounters::repeated(std::uint64_t times) const {
    PhaseCounters t = *this;
    for_each_part(t, t, [times](auto& part, const auto&, const auto& fields) {
        scale_counters(part, times, fields, "a counter of a repeated phase");
    });
    return t;
}

bool operator==(const PhaseCounters& a, const PhaseCounters& b) {
    bool equal = true;
    for_each_part(a, b, [&equal](const auto& x, const auto& y, const auto& fields) {
        equal = equal && equal_counters(x, y, fields);
    });
    return equal;
}

void add_load_wait(PhaseCounters& c, std::uint64_t wait, std::uint64_t converter_delay) {
    const std::uint64_t converter = std::min(wait, converter_delay);
    checked_accumulate(c.converter_wait_cycles, converter, "converter wait cycles of a phase");
    checked_accumulate(c.load_wait_cycles, wait - converter, "load wait cycles of a phase");
}

const CyclePart& bottleneck(const PhaseCounters& c) {
    const CyclePart* most = &kCycleParts[0];
    for (const CyclePart& part : kCycleParts)
        if (c.*part.member > c.*most->member) most = &part;
    return *most;
}

const CounterInfo& counter_info(std::uint64_t PhaseCounters::*member) {
    for (const auto& f : kPhaseCounterFields)
        if (f.member == member) return f.info;
    throw std::logic_error("counter_info: a PhaseCounters member without a row in kPhaseCounterFields");
}

std::vector<CounterValue> counter_values(const PhaseCounters& c) {
    std::vector<CounterValue> out;
    for_each_part(c, c, [&out](const auto& part, const auto&, const auto& fields) {
        for (const auto& f : fields) out.push_back({f.info, part.*f.member});
    });
    return out;
}

const std::vector<CounterInfo>& counter_infos() {
    static const std::vector<CounterInfo> infos = [] {
        std::vector<CounterInfo> out;
        for (const CounterValue& v : counter_values(PhaseCounters{})) out.push_back(v.info);
        return out;
    }();
    return infos;
}

}  // namespace fastsim::node
