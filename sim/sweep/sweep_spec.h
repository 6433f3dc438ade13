// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fastsim::sweep {

/// One axis of a sweep: one key, or several keys zipped (their value lists step together).
/// values[v][k] is the text of key k's v-th value (a YAML scalar, or flow YAML for a list/map).
struct Axis {
    std::string name;               ///< column group name: `name:` or the first key
    std::vector<std::string> keys;  ///< config key paths, or "base" for the base config file
    std::vector<std::vector<std::string>> values;
};

/// `when` all these key = value hold for a point's axis values, `set` these overrides.
struct ConditionalOverride {
    std::vector<std::pair<std::string, std::string>> when;
    std::vector<std::pair<std::string, std::string>> set;
};

/// A sweep file, resolved: paths absolute, every list checked (docs/sweeps.md).
struct SweepSpec {
    std::string file;  ///< the sweep YAML, absolute
    std::string name;
    std::string base_config;                               ///< absolute; an axis with key "base" replaces it per point
    std::vector<std::pair<std::string, std::string>> set;  ///< overrides of every point
    std::vector<Axis> axes;
    std::vector<ConditionalOverride> overrides;
    std::string plot_x, plot_series;  ///< `plot:` hints for fastsim report (may be empty)
};

/// One design point: what `fastsim run` is given.
struct SweepPoint {
    std::size_t index = 0;
    std::string id;                                           ///< "p0000": index, zero-padded to at least 4 digits
    std::string base_config;                                  ///< absolute path
    std::vector<std::pair<std::string, std::string>> values;  ///< every axis key in axis order, and its value
    std::vector<std::string> overrides;                       ///< key.path=value for `-p`, in the order they apply
};

/// What a file of this format is: a sweep file, or an explore file (a sweep file's space with an
/// `explore:` section of objectives and search, docs/explore.md).
enum class FileKind { sweep, explore };

/// Reads and checks a sweep file (or an explore file's space, its `explore:` section left to the
/// explorer). Throws ConfigError naming file, line and key path.
SweepSpec load_sweep(const std::string& path, FileKind kind = FileKind::sweep);
/// load_sweep() of `text` as the contents of the file at `path`.
SweepSpec load_sweep_text(const std::string& text, const std::string& path, FileKind kind = FileKind::sweep);

/// Every point, in the documented order: the cartesian product of the axes, the last axis
/// varying fastest (nested loops in file order). Overrides apply as: `set`, then each axis
/// value in axis order, then every matching `overrides` entry in file order.
std::vector<SweepPoint> enumerate_points(const SweepSpec& spec);
/// How many points the spec has: the product of its axes' lengths.
std::size_t point_count(const SweepSpec& spec);
/// Point `index` alone, as enumerate_points() makes it.
SweepPoint point_at(const SweepSpec& spec, std::size_t index);
/// Point `index` whose value index on each axis is `choices` (axis_choices(spec, index)).
SweepPoint point_at(const SweepSpec& spec, std::size_t index, const std::vector<std::size_t>& choices);
/// The value index on each axis of point `index`: its mixed-radix digits, the last axis least
/// significant; point_index is the inverse.
std::vector<std::size_t> axis_choices(const SweepSpec& spec, std::size_t index);
std::size_t point_index(const SweepSpec& spec, const std::vector<std::size_t>& choices);

/// The axis key that swaps a point's whole base config instead of overriding a key.
inline constexpr const char* kBaseKey = "base";

/// The most points one sweep may have; larger sweeps are split by the user.
inline constexpr std::size_t kMaxPoints = 1'000'000;

/// The id of point `index` of a sweep of `count` points: "p" and the index, zero-padded to at
/// least 4 digits and to the digits of count - 1 ("p0007", "p012345").
/// `message`, an error from loading `point`'s config, with the override it names ("-p KEY: …" or
/// "-p KEY=VALUE: …", as config::load words it) traced back to the sweep file: "SWEEP.yaml:
/// axes[1] sets node.array.rows = 0 (design p0003): …" (or sweep.set, or overrides[j]). Other
/// messages come back as they are.
std::string locate_in_sweep_file(const SweepSpec& spec, const SweepPoint& point, const std::string& message);

std::string point_id(std::size_t index, std::size_t count);

/// A `--shard k/N` selection: k in 1..N; points with index % N == k - 1.
struct Shard {
    std::size_t k = 1, count = 1;
    [[nodiscard]] bool contains(std::size_t index) const { return index % count == k - 1; }
};
/// Parses "k/N"; throws UserError naming --shard unless 1 <= k <= N.
Shard parse_shard(const std::string& text);

/// FNV-1a of `bytes` folded into `h` (start from kFnvOffset), then a separator byte, so "ab"+"c"
/// and "a"+"bc" differ; hex_digest writes the result as 16 hex digits.
inline constexpr std::uint64_t kFnvOffset = 14695981039346656037ULL;
void fnv1a(std::uint64_t& h, const std::string& bytes);
std::string hex_digest(std::uint64_t h);

/// A 16-hex-digit FNV-1a hash of every point's base config (its contents, not its path) and overrides:
/// equal fingerprints mean the same points with the same meaning.
std::string fingerprint(const std::vector<SweepPoint>& points);

}  // namespace fastsim::sweep
