// SPDX-License-Identifier: MIT
#pragma once

// Strong types for the units and ids that meet at module boundaries: node cycles (counted at a
// node's own clock), picoseconds (cluster time), node ids and layer ids. Each wraps one
// integer and compiles to it; none converts implicitly to another or to its integer. Cycles
// become picoseconds or seconds only through the functions at the end of this header.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "common/checked.h"

namespace fastsim {

/// A time as a count of `Unit` in 64 bits. + and - stay within one unit and wrap as
/// std::uint64_t does: where a sum can overflow, use checked_add / checked_accumulate /
/// checked_mul below; a - b requires a >= b.
template <class Unit>
class TimeCount {
public:
    constexpr TimeCount() = default;
    constexpr explicit TimeCount(std::uint64_t count) : m_count(count) {}
    [[nodiscard]] constexpr std::uint64_t count() const { return m_count; }

    constexpr TimeCount& operator+=(TimeCount other) {
        m_count += other.m_count;
        return *this;
    }
    constexpr TimeCount& operator-=(TimeCount other) {
        m_count -= other.m_count;
        return *this;
    }
    [[nodiscard]] friend constexpr TimeCount operator+(TimeCount a, TimeCount b) {
        return TimeCount(a.m_count + b.m_count);
    }
    [[nodiscard]] friend constexpr TimeCount operator-(TimeCount a, TimeCount b) {
        return TimeCount(a.m_count - b.m_count);
    }

    [[nodiscard]] friend constexpr bool operator==(TimeCount a, TimeCount b) { return a.m_count == b.m_count; }
    [[nodiscard]] friend constexpr bool operator!=(TimeCount a, TimeCount b) { return a.m_count != b.m_count; }
    [[nodiscard]] friend constexpr bool operator<(TimeCount a, TimeCount b) { return a.m_count < b.m_count; }
    [[nodiscard]] friend constexpr bool operator<=(TimeCount a, TimeCount b) { return a.m_count <= b.m_count; }
    [[nodiscard]] friend constexpr bool operator>(TimeCount a, TimeCount b) { return a.m_count > b.m_count; }
    [[nodiscard]] friend constexpr bool operator>=(TimeCount a, TimeCount b) { return a.m_count >= b.m_count; }

private:
    std::uint64_t m_count = 0;
};

struct CyclesUnit;
struct PicosecondsUnit;
/// Cycles of one node's clock; meaningful only with that clock's frequency.
using Cycles = TimeCount<CyclesUnit>;
/// Picoseconds: the cluster's time, shared by nodes of different clocks and the interconnect.
using Picoseconds = TimeCount<PicosecondsUnit>;

/// a + b; SizeOverflow naming `quantity` if the sum does not fit 64 bits.
template <class Unit>
[[nodiscard]] TimeCount<Unit> checked_add(TimeCount<Unit> a, TimeCount<Unit> b, const char* quantity) {
    return TimeCount<Unit>(checked_add(a.count(), b.count(), quantity));
}

/// `total += value`, checked as checked_add.
template <class Unit>
void checked_accumulate(TimeCount<Unit>& total, TimeCount<Unit> value, const char* quantity) {
    total = checked_add(total, value, quantity);
}

/// `times` x a; SizeOverflow naming `quantity` if the product does not fit 64 bits.
template <class Unit>
[[nodiscard]] TimeCount<Unit> checked_mul(std::uint64_t times, TimeCount<Unit> a, const char* quantity) {
    return TimeCount<Unit>(checked_mul(times, a.count(), quantity));
}

/// An index of `Tag` (a node of the cluster, a layer of the network): explicit from and to
/// std::size_t, ordered, hashable.
template <class Tag>
class Id {
public:
    constexpr Id() = default;
    constexpr explicit Id(std::size_t value) : m_value(value) {}
    [[nodiscard]] constexpr std::size_t value() const { return m_value; }

    [[nodiscard]] friend constexpr bool operator==(Id a, Id b) { return a.m_value == b.m_value; }
    [[nodiscard]] friend constexpr bool operator!=(Id a, Id b) { return a.m_value != b.m_value; }
    [[nodiscard]] friend constexpr bool operator<(Id a, Id b) { return a.m_value < b.m_value; }
    [[nodiscard]] friend constexpr bool operator<=(Id a, Id b) { return a.m_value <= b.m_value; }
    [[nodiscard]] friend constexpr bool operator>(Id a, Id b) { return a.m_value > b.m_value; }
    [[nodiscard]] friend constexpr bool operator>=(Id a, Id b) { return a.m_value >= b.m_value; }

private:
    std::size_t m_value = 0;
};

struct NodeIdTag;
struct LayerIdTag;
/// A compute node of the cluster: its program, its stats, its topology vertex (the nodes are
/// the topology's first vertices).
using NodeId = Id<NodeIdTag>;
/// A layer of the network, in the layer graph's order.
using LayerId = Id<LayerIdTag>;

// Conversions between a node's cycles and time. The schedule's compute times, and so every
// simulated cluster number, come from to_picoseconds; timelines use to_picoseconds_exact.

/// `cycles` of a clock at `clock_hz` (> 0) as picoseconds: cycles x (10^12 / clock_hz) in
/// double, rounded to nearest (ties to even). SizeOverflow naming `quantity` beyond 64 bits.
[[nodiscard]] inline Picoseconds to_picoseconds(Cycles cycles, std::uint64_t clock_hz, const char* quantity) {
    const double ps_per_cycle = 1e12 / static_cast<double>(clock_hz);
    return Picoseconds(checked_round(static_cast<double>(cycles.count()) * ps_per_cycle, quantity));
}

/// As to_picoseconds, exactly: cycles x 10^12 / clock_hz rounded to nearest (ties up) in 128-bit
/// integers, so monotone in `cycles` and exact where clock_hz divides 10^12 (for timelines; it
/// can differ from to_picoseconds by 1 ps on a near-tie). The result must fit 64 bits.
[[nodiscard]] inline Picoseconds to_picoseconds_exact(Cycles cycles, std::uint64_t clock_hz) {
    __extension__ using Wide = unsigned __int128;  // cycles x 10^12 exceeds 64 bits past 0.2 s at 1 GHz
    const Wide scaled = static_cast<Wide>(cycles.count()) * 1'000'000'000'000ull + clock_hz / 2;
    return Picoseconds(static_cast<std::uint64_t>(scaled / clock_hz));
}

/// `ps` in seconds: ps x 10^-12 in double.
[[nodiscard]] inline double to_seconds(Picoseconds ps) { return static_cast<double>(ps.count()) * 1e-12; }

/// `cycles` of a clock at `clock_hz` in seconds: cycles / clock_hz in double.
[[nodiscard]] inline double to_seconds(Cycles cycles, std::uint64_t clock_hz) {
    return static_cast<double>(cycles.count()) / static_cast<double>(clock_hz);
}

/// `ps` as cycles of a clock at `clock_hz`: to_seconds(ps) x clock_hz in double, rounded to
/// nearest (ties away from zero). The result must fit 63 bits.
[[nodiscard]] inline Cycles to_cycles(Picoseconds ps, std::uint64_t clock_hz) {
    return Cycles(static_cast<std::uint64_t>(std::llround(to_seconds(ps) * static_cast<double>(clock_hz))));
}

}  // namespace fastsim

namespace std {
template <class Tag>
struct hash<fastsim::Id<Tag>> {
    std::size_t operator()(fastsim::Id<Tag> id) const noexcept { return std::hash<std::size_t>{}(id.value()); }
};
}  // namespace std
