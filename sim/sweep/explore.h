// SPDX-License-Identifier: MIT
// `fastsim explore` (docs/explore.md): a sweep file's design space searched for the designs no
// other beats on every objective, under constraints. Plain C++: the evaluation of a design is
// the caller's (a callback), so the search and the front are tested on their own.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/enum_names.h"
#include "common/summary.h"
#include "sweep/sweep_spec.h"

namespace fastsim::sweep {

/// `field op bound` on a summary field, such as an upper bound on the step time.
struct Constraint {
    enum class Op : std::uint8_t { le, lt, ge, gt };
    std::string field;
    Op op = Op::le;
    double bound = 0;
    std::string text;  ///< as written

    [[nodiscard]] bool holds(double value) const;
};
/// Parses "FIELD <= NUMBER" (also <, >=, >); std::nullopt if `text` is not of that form.
std::optional<Constraint> parse_constraint(const std::string& text);

/// How the space is searched (explore.method).
enum class SearchMethod : std::uint8_t {
    automatic,   ///< exhaustive when the space has at most `budget` designs, else sampled
    exhaustive,  ///< every point
    sampled,     ///< a fifth of the budget uniformly at random, the rest one axis step from the front
    random       ///< the whole budget uniformly at random (a baseline for sampled)
};
const EnumNames<SearchMethod, 4>& enum_names(SearchMethod);

/// An explore file: its space (a sweep file's `sweep`, `axes` and `overrides`) and its
/// `explore:` section.
struct ExploreSpec {
    SweepSpec space;
    std::vector<std::string> objectives;  ///< summary fields, each minimised
    std::vector<Constraint> constraints;
    std::size_t budget = 2000;  ///< the most designs evaluated; a space no larger is searched whole
    std::uint64_t seed = 1;     ///< of the sampled search
    SearchMethod method = SearchMethod::automatic;
};
/// Reads and checks an explore file. ConfigError names file, line and key path.
ExploreSpec load_explore(const std::string& path);
ExploreSpec load_explore_text(const std::string& text, const std::string& path);

/// What evaluating one design gave: its summary fields, or an error (the design cannot run on
/// its node: it is infeasible). `pruned` says the evaluator judged it infeasible without
/// simulating it (a constraint on a field known beforehand, such as area, fails).
struct Evaluation {
    Summary fields;
    std::string error;
    bool pruned = false;
};

/// An evaluation as bytes, every value exact (`fastsim explore --jobs`: from the worker process
/// that evaluated it to the search), and back. decode_evaluation throws std::logic_error on bytes
/// encode_evaluation did not write.
std::string encode_evaluation(const Evaluation& e);
Evaluation decode_evaluation(const std::string& bytes);

/// One evaluated design, as designs.csv holds it.
struct Design {
    std::size_t index = 0;
    std::string id;
    bool feasible = false;
    std::vector<double> objectives;  ///< ExploreSpec::objectives' values, when feasible
    Summary fields;                  ///< every field the evaluation gave
    std::string error;               ///< why it is infeasible (a failed run, a broken constraint)
};

/// True if `a` is no worse than `b` on every objective and better on one (minimising).
bool dominates(const std::vector<double>& a, const std::vector<double>& b);

/// The designs no other dominates, kept as designs arrive; equal objective vectors are all kept.
class ParetoFront {
public:
    /// Adds `design` (index into the caller's list, objectives) if no member dominates it, and
    /// drops the members it dominates. True if it joined.
    bool add(std::size_t design, const std::vector<double>& objectives);
    [[nodiscard]] const std::vector<std::size_t>& members() const { return m_members; }

private:
    std::vector<std::size_t> m_members;
    std::vector<std::vector<double>> m_objectives;
};

/// Runs the search: evaluates designs through `evaluate`, passes each to `on_design` as it is
/// done (designs.csv's row), skips those in `done` (a resumed run's, by index; they count
/// towards the budget and seed the front), and returns every design of this run and `done`'s.
/// `shard` restricts an exhaustive search to its points.
///
/// Designs are evaluated in batches that the search alone decides (up to `batch` points of an
/// exhaustive search or of random draws; a front member's neighbours), and considered in batch
/// order, so the designs, their order and the front do not depend on how a batch is evaluated
/// (`fastsim explore --jobs` evaluates one in parallel).
class Explorer {
public:
    using Evaluate = std::function<Evaluation(const SweepPoint&)>;
    /// Evaluations of `points`, in their order.
    using EvaluateBatch = std::function<std::vector<Evaluation>(const std::vector<SweepPoint>& points)>;
    using OnDesign = std::function<void(const Design&)>;

    /// The batch size of an exhaustive search and of random draws when none is given.
    static constexpr std::size_t kDefaultBatch = 64;

    Explorer(const ExploreSpec& spec, Evaluate evaluate, OnDesign on_design, Shard shard = {});
    Explorer(const ExploreSpec& spec, EvaluateBatch evaluate, OnDesign on_design, Shard shard = {},
             std::size_t batch = kDefaultBatch);

    /// The method this run uses: never automatic.
    [[nodiscard]] SearchMethod method() const;
    /// How many designs this run will evaluate at most (the budget, or the shard's points).
    [[nodiscard]] std::size_t planned() const;

    /// Runs to the budget; `done` are designs already evaluated (a resumed run's).
    std::vector<Design> run(std::vector<Design> done);

private:
    /// The designs of `indices`, evaluated as one batch, in that order.
    std::vector<Design> evaluate(const std::vector<std::size_t>& indices);
    Design design_of(std::size_t index, const SweepPoint& point, Evaluation e) const;
    void consider(std::vector<Design>& designs, ParetoFront& front, Design design, std::vector<std::size_t>& grew);

    const ExploreSpec& m_spec;
    EvaluateBatch m_evaluate;
    OnDesign m_on_design;
    Shard m_shard;
    std::size_t m_batch = kDefaultBatch;
    std::size_t m_points = 0;
};

}  // namespace fastsim::sweep
