// SPDX-License-Identifier: MIT
#pragma once

// A pipeline plan's step simulated at stage level (docs/pipeline.md, "Stage-level
// simulation"): its pieces (planner/stage_level.h) run alone, on the SystemC executor for a
// run or on the replay for the planner, and composed into the step.

#include <array>
#include <functional>
#include <cstdint>
#include <optional>
#include <vector>

#include "cluster/cluster.h"
#include "config/params.h"
#include "interconnect/network.h"
#include "interconnect/program.h"
#include "planner/planner.h"
#include "planner/schedule.h"
#include "planner/stage_level.h"

namespace fastsim::run {

/// A pipeline plan's pieces, counted: each stage's three, each send group's one. Pieces are
/// kept while they hold at most kKeptPieceOps ops in all; beyond that each is built, counted and
/// dropped, and built again where it runs (`visit`), so that at most one piece's programs are
/// held at a time (a piece of GPT-3 175B's 1,024-node stage holds 14 million ops).
struct StagePieces {
    std::size_t stages = 0;
    std::vector<planner::SendGroup> groups;  ///< planner::send_groups
    std::uint64_t step_ops = 0;              ///< the whole step's programs' ops (planner::pipeline_step_ops)
    std::uint64_t piece_ops = 0;             ///< the pieces' ops, each piece once
    std::uint64_t held_ops = 0;              ///< the most ops held at once: those kept and the largest other piece

    /// Pieces in the order piece_index gives: stage s's piece k, then each send group.
    [[nodiscard]] std::size_t piece_count() const { return stages * planner::kStagePieces + groups.size(); }
    [[nodiscard]] std::size_t piece_index(std::size_t stage, planner::StagePiece piece) const {
        return stage * planner::kStagePieces + static_cast<std::size_t>(piece);
    }
    /// Calls `use` with piece `index`'s programs (kept, or built for the call).
    void visit(std::size_t index, const std::function<void(const std::vector<interconnect::NodeProgram>&)>& use) const;

    std::vector<std::vector<interconnect::NodeProgram>> kept;  ///< per piece; empty when not kept
    /// Builds piece `index`'s programs (from the plan, the compute times and the gradient sync
    /// build_stage_pieces was given, which must outlive this).
    std::function<std::vector<interconnect::NodeProgram>(std::size_t index)> build;
};
/// At most this many ops of pieces are kept between counting them and running them.
inline constexpr std::uint64_t kKeptPieceOps = 2'000'000;
/// `keep_ops`: how many ops of pieces to keep (kKeptPieceOps; 0 keeps none).
StagePieces build_stage_pieces(const planner::Plan& plan, std::size_t node_count,
                               const planner::ComputePicoseconds& compute_ps, planner::GradientSync& gradient_sync,
                               std::uint64_t keep_ops = kKeptPieceOps);

/// Whether `setting` simulates a step of `step_ops` ops, `piece_ops` in pieces, at stage level:
/// always under stage_level, never under message_level; under auto, when the step runs more
/// than config::kStageLevelAboveOps ops and more than its pieces.
bool stage_level_chosen(config::PipelineSimulation setting, std::uint64_t step_ops, std::uint64_t piece_ops);

/// `plan`'s pieces when its step is simulated at stage level under `setting`, else nullopt (the
/// message level): never for a plan without a pipeline or with a delayed update (its steady
/// state needs every message); always under stage_level; under auto, when the step runs more
/// than config::kStageLevelAboveOps ops (build_stage_pieces' step_ops) and more than its pieces.
std::optional<StagePieces> stage_level_pieces(config::PipelineSimulation setting, const planner::Plan& plan,
                                              std::size_t node_count, const planner::ComputePicoseconds& compute_ps,
                                              planner::GradientSync& gradient_sync);

/// The step of `plan` composed from its pieces replayed on `network` (the planner's replay at
/// stage level), in seconds.
double replay_by_stage(const planner::Plan& plan, const StagePieces& pieces, interconnect::Network& network);

/// The step composed from its pieces each simulated on the SystemC executor under a kernel of
/// its own, as one ClusterResult: each piece's node, channel and label stats once per task it
/// stands for, its labels moved to the task's micro-batch and time; receivers wait from when
/// their stage was free until their transfer arrived, and convert it (compute) after.
cluster::ClusterResult simulate_by_stage_on_systemc(const interconnect::Topology& topology, const planner::Plan& plan,
                                                    const StagePieces& pieces);

}  // namespace fastsim::run
