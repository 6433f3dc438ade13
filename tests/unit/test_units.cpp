// SPDX-License-Identifier: MIT
// The unit and id types of common/units.h: what does not compile (static_asserts), arithmetic
// within one type, checked arithmetic, and the cycles <-> picoseconds conversions with the
// rounding the simulation's numbers depend on.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <type_traits>
#include <unordered_set>

#include "common/units.h"

using namespace fastsim;

namespace Catch {
template <class Unit>
struct StringMaker<TimeCount<Unit>> {
    static std::string convert(TimeCount<Unit> t) { return std::to_string(t.count()); }
};
}  // namespace Catch

namespace {

template <class A, class B, class = void>
struct Addable : std::false_type {};
template <class A, class B>
struct Addable<A, B, std::void_t<decltype(std::declval<A>() + std::declval<B>())>> : std::true_type {};

template <class A, class B, class = void>
struct Comparable : std::false_type {};
template <class A, class B>
struct Comparable<A, B, std::void_t<decltype(std::declval<A>() < std::declval<B>())>> : std::true_type {};

// No implicit conversion between the units, the ids, or their integers.
static_assert(!std::is_convertible_v<Cycles, Picoseconds>);
static_assert(!std::is_convertible_v<Picoseconds, Cycles>);
static_assert(!std::is_convertible_v<std::uint64_t, Picoseconds>);
static_assert(!std::is_convertible_v<Picoseconds, std::uint64_t>);
static_assert(!std::is_convertible_v<std::uint64_t, Cycles>);
static_assert(!std::is_convertible_v<NodeId, LayerId>);
static_assert(!std::is_convertible_v<LayerId, NodeId>);
static_assert(!std::is_convertible_v<std::size_t, NodeId>);
static_assert(!std::is_convertible_v<NodeId, std::size_t>);
static_assert(!std::is_constructible_v<Picoseconds, Cycles>);
static_assert(!std::is_constructible_v<NodeId, LayerId>);
// Arithmetic and comparison only within one type.
static_assert(Addable<Picoseconds, Picoseconds>::value);
static_assert(!Addable<Picoseconds, Cycles>::value);
static_assert(!Addable<Picoseconds, std::uint64_t>::value);
static_assert(!Addable<NodeId, NodeId>::value);
static_assert(Comparable<NodeId, NodeId>::value);
static_assert(!Comparable<NodeId, LayerId>::value);
static_assert(!Comparable<Cycles, Picoseconds>::value);
static_assert(!Comparable<Picoseconds, std::uint64_t>::value);
// Plain integers underneath: same size, trivially copyable, usable in constant expressions.
static_assert(sizeof(Picoseconds) == sizeof(std::uint64_t) && sizeof(Cycles) == sizeof(std::uint64_t));
static_assert(sizeof(NodeId) == sizeof(std::size_t) && sizeof(LayerId) == sizeof(std::size_t));
static_assert(std::is_trivially_copyable_v<Picoseconds> && std::is_trivially_copyable_v<NodeId>);
static_assert((Picoseconds(3) + Picoseconds(4)).count() == 7);
static_assert(Picoseconds(9) - Picoseconds(4) == Picoseconds(5));
static_assert(Cycles(2) < Cycles(3) && NodeId(4).value() == 4);

}  // namespace

TEST_CASE("units: arithmetic and comparison stay within one unit", "[units]") {
    Picoseconds t{0};
    CHECK(t.count() == 0);
    CHECK(Picoseconds().count() == 0);
    t += Picoseconds(1500);
    t += Picoseconds(500);
    CHECK(t == Picoseconds(2000));
    t -= Picoseconds(250);
    CHECK(t.count() == 1750);
    CHECK(std::max(Picoseconds(5), Picoseconds(8)) == Picoseconds(8));
    CHECK(Picoseconds(5) != Picoseconds(8));
    CHECK((Picoseconds(5) <= Picoseconds(5) && Picoseconds(5) >= Picoseconds(5)));
    CHECK(Picoseconds(6) > Picoseconds(5));
    Cycles c(10);
    c += Cycles(5);
    CHECK(c.count() == 15);
}

TEST_CASE("units: checked arithmetic throws SizeOverflow naming the quantity", "[units]") {
    const Picoseconds max(~std::uint64_t{0});
    CHECK(checked_add(Picoseconds(2), Picoseconds(3), "x") == Picoseconds(5));
    CHECK_THROWS_AS(checked_add(max, Picoseconds(1), "x"), SizeOverflow);
    CHECK(checked_mul(4, Picoseconds(250), "x") == Picoseconds(1000));
    CHECK(checked_mul(0, max, "x") == Picoseconds(0));
    try {
        (void)checked_mul(2, max, "picoseconds of merged ring steps");
        FAIL("no throw");
    } catch (const SizeOverflow& e) {
        CHECK(std::string(e.quantity()) == "picoseconds of merged ring steps");
    }
    Picoseconds total(max.count() - 10);
    checked_accumulate(total, Picoseconds(10), "x");
    CHECK(total == max);
    CHECK_THROWS_AS(checked_accumulate(total, Picoseconds(1), "x"), SizeOverflow);
    CHECK(total == max);
}

TEST_CASE("units: cycles become picoseconds through 10^12 / clock_hz in double, rounded to nearest", "[units]") {
    // 1 GHz and 500 MHz divide 10^12: exact.
    CHECK(to_picoseconds(Cycles(7), 1'000'000'000, "x") == Picoseconds(7'000));
    CHECK(to_picoseconds(Cycles(123'456'789), 500'000'000, "x") == Picoseconds(246'913'578'000));
    // 700 MHz: 1428.571... ps per cycle.
    CHECK(to_picoseconds(Cycles(1), 700'000'000, "x") == Picoseconds(1'429));
    CHECK(to_picoseconds(Cycles(3), 700'000'000, "x") == Picoseconds(4'286));
    CHECK(to_picoseconds(Cycles(7), 700'000'000, "x") == Picoseconds(10'000));
    // Ties go to even: at 400 GHz 1 cycle is 2.5 ps -> 2, 3 cycles 7.5 ps -> 8.
    CHECK(to_picoseconds(Cycles(1), 400'000'000'000, "x") == Picoseconds(2));
    CHECK(to_picoseconds(Cycles(3), 400'000'000'000, "x") == Picoseconds(8));
    // The same arithmetic the schedule always did, for many counts at clocks that do not divide 10^12.
    for (const std::uint64_t hz : {700'000'000ull, 940'000'000ull, 1'234'567'891ull}) {
        const double ps_per_cycle = 1e12 / static_cast<double>(hz);
        for (std::uint64_t cycles = 1; cycles < 1'000'000'000'000ull; cycles = cycles * 7 + 3) {
            INFO(cycles << " cycles at " << hz << " Hz");
            CHECK(to_picoseconds(Cycles(cycles), hz, "x").count() ==
                  static_cast<std::uint64_t>(std::nearbyint(static_cast<double>(cycles) * ps_per_cycle)));
        }
    }
    CHECK_THROWS_AS(to_picoseconds(Cycles(~std::uint64_t{0}), 1'000'000'000, "x"), SizeOverflow);
}

TEST_CASE("units: the exact conversion rounds half up in integers and is monotone", "[units]") {
    CHECK(to_picoseconds_exact(Cycles(7), 700'000'000) == Picoseconds(10'000));
    CHECK(to_picoseconds_exact(Cycles(1), 700'000'000) == Picoseconds(1'429));
    CHECK(to_picoseconds_exact(Cycles(1), 400'000'000'000) == Picoseconds(3));  // 2.5 ps: half up
    CHECK(to_picoseconds_exact(Cycles(123'456'789'012ull), 1'000'000'000'000ull) == Picoseconds(123'456'789'012ull));
    CHECK(to_picoseconds_exact(Cycles(10'000'000'000ull), 1'000'000'000) == Picoseconds(10'000'000'000'000ull));
    for (std::uint64_t c = 0; c < 2000; ++c)
        CHECK(to_picoseconds_exact(Cycles(c + 1), 940'000'000) > to_picoseconds_exact(Cycles(c), 940'000'000));
}

TEST_CASE("units: picoseconds become seconds and cycles, cycles seconds", "[units]") {
    CHECK(to_seconds(Picoseconds(2'500'000'000'000ull)) == Approx(2.5));
    CHECK(to_seconds(Picoseconds(0)) == 0);
    CHECK(to_seconds(Cycles(1'400'000'000), 700'000'000) == 2.0);
    CHECK(to_cycles(Picoseconds(1'000'000), 1'000'000'000) == Cycles(1'000));
    CHECK(to_cycles(Picoseconds(10'000), 700'000'000) == Cycles(7));
    CHECK(to_cycles(Picoseconds(2'142), 700'000'000) == Cycles(1));  // 1.4994 cycles
    CHECK(to_cycles(Picoseconds(2'143), 700'000'000) == Cycles(2));  // 1.5001 cycles
    // Round trip through picoseconds at a clock that divides 10^12 is exact.
    for (std::uint64_t c : {0ull, 1ull, 999ull, 123'456'789ull})
        CHECK(to_cycles(to_picoseconds(Cycles(c), 500'000'000, "x"), 500'000'000) == Cycles(c));
}

TEST_CASE("units: ids are explicit, ordered and hashable", "[units]") {
    const NodeId a(3), b(5);
    CHECK(a.value() == 3);
    CHECK(NodeId().value() == 0);
    CHECK((a < b && a <= b && b > a && b >= a && a != b && a == NodeId(3)));
    std::unordered_set<NodeId> nodes{a, b, NodeId(3)};
    CHECK(nodes.size() == 2);
    CHECK(std::hash<LayerId>{}(LayerId(42)) == std::hash<std::size_t>{}(42));
}
