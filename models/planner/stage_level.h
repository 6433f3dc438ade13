// SPDX-License-Identifier: MIT
#pragma once

// A pipeline's step at stage level (docs/pipeline.md, "Stage-level simulation"): the step cut
// into pieces (each stage's forward and backward of one micro-batch, its last backward with
// the all-reduces and the weight updates, and each send group: the transfers a stage sends at
// once, one micro-batch's messages), each piece run alone from t = 0 (by the SystemC executor,
// or the replay), and the step composed from them node by node in the schedule's order. A step
// of M micro-batches costs three pieces per stage and one per send group instead of M of each.
//
// What it leaves out: contention between a stage's tasks and anything else running at once (two
// stages' tasks on shared links, a transfer beside a stage's exchanges); send groups that share a
// channel queue whole rather than interleave; and the nodes a piece couples start it together,
// when the last is ready.

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "interconnect/program.h"
#include "planner/pipeline_plan.h"
#include "planner/schedule.h"

namespace fastsim::planner {

/// The kinds of stage piece: a forward or backward of one micro-batch (no transfers, no
/// all-reduces), and the stage's last backward with its all-reduces, the final waits and the
/// weight updates.
enum class StagePiece : std::uint8_t { forward = 0, backward = 1, last_backward = 2 };
inline constexpr std::size_t kStagePieces = 3;

/// The micro-batch stage `stage`'s last backward runs (its last task in stage_order).
std::size_t last_backward_microbatch(const PipelinePlan& p, std::size_t stage);

/// Stage `stage`'s programs for one piece (node_count programs, only the stage's nodes with
/// ops): labelled micro-batch 0, the last backward with last_backward_microbatch.
std::vector<interconnect::NodeProgram> stage_piece_programs(const Plan& plan, std::size_t stage, StagePiece piece,
                                                            std::size_t node_count,
                                                            const ComputePicoseconds& compute_ps,
                                                            GradientSync& gradient_sync);

/// The transfers a stage sends at once, after its forward of a micro-batch (`forward`: those
/// from it) or after its backward (those to it: their gradients go back).
struct SendGroup {
    std::size_t stage = 0;
    bool forward = true;
    std::vector<std::size_t> transfers;  ///< PipelinePlan::transfers, ascending
    std::vector<std::size_t> receivers;  ///< the node ids receiving any of them, first seen first
};

/// The plan's send groups: each stage's forward group, then each stage's backward group, those
/// with a transfer only.
std::vector<SendGroup> send_groups(const PipelinePlan& p);

/// A send group's messages of micro-batch 0: sends and receives, no conversions.
std::vector<interconnect::NodeProgram> send_group_programs(const Plan& plan, const SendGroup& group,
                                                           std::size_t node_count);

/// The ops of the whole step's programs (build_pipeline_schedule's), counted from the pieces':
/// each stage's forward and backward pieces M times (the last backward once, for one of
/// them), each send group M times, and the conversions after each transfer's receives.
std::uint64_t pipeline_step_ops(const PipelinePlan& p,
                                const std::vector<std::array<std::uint64_t, kStagePieces>>& stage_ops,
                                const std::vector<std::uint64_t>& group_ops);

/// One piece run alone from t = 0: when each node's part of it ended, in seconds (0 for a
/// node without ops), and which nodes it couples (piece_components).
struct PieceTiming {
    std::vector<double> node_end_s;      ///< by node id
    std::vector<std::size_t> component;  ///< by node id: nodes that exchange messages in it share one
    /// A send group's: the channels it kept busy at least half as long as its busiest, with
    /// their busy seconds (its bottleneck, which other groups through them queue behind).
    std::vector<std::pair<std::size_t, double>> bottleneck;
};

/// The channels of `busy_s` (each channel's busy time in a piece) busy at least half as long
/// as the busiest, with their busy time (none if none was busy).
std::vector<std::pair<std::size_t, double>> bottleneck_channels(const std::vector<double>& busy_s);

/// The nodes `programs` couple: per node, the smallest node id it is joined to through
/// messages (a Send's or Recv's peer) or a FlowCollective's tag, transitively.
std::vector<std::size_t> piece_components(const std::vector<interconnect::NodeProgram>& programs);

/// Each piece run alone.
struct StagePieceTimes {
    std::vector<std::array<PieceTiming, kStagePieces>> stages;  ///< per stage, by StagePiece
    std::vector<PieceTiming> groups;                            ///< per send group (send_groups)
};

/// One task of the composed step: stage `stage`'s `task` (`piece` the piece it runs). Per node
/// of the stage (in PipelineStage::nodes order): when it was free, when it started the piece
/// and when its part ended (the last backward: after its all-reduces and weight updates).
struct StageLevelTask {
    std::size_t stage = 0;
    StageTask task;
    StagePiece piece = StagePiece::forward;
    std::vector<double> free_s, start_s, end_s;
    /// The transfers it received, in turn: (PipelinePlan::transfers index, StageLevelStep::sends index).
    std::vector<std::pair<std::size_t, std::size_t>> received;
};

/// One send group's messages of one micro-batch: they left from `start_s` (the first send, or
/// later behind earlier messages on their channels), and each receiver's last arrived at
/// `arrival_s` (by SendGroup::receivers).
struct StageLevelSend {
    std::size_t group = 0, microbatch = 0;
    double start_s = 0;
    std::vector<double> arrival_s;
};

struct StageLevelStep {
    std::vector<StageLevelTask> tasks;  ///< in the order composed (each stage's in stage_order)
    std::vector<StageLevelSend> sends;  ///< in the order booked (by their first message)
    double step_s = 0;                  ///< the last node's end
};

/// The step composed from the pieces run alone (docs/pipeline.md, "Stage-level simulation").
/// Each stage runs its tasks in stage_order, node by node: a node is ready once free, once the
/// transfers the task receives have reached it and it has converted them
/// (transfer_conversions), in turn; the nodes a piece couples start it together, when the last
/// of them is ready, and each ends its own part of the piece later. A send group's messages
/// leave when their senders' parts of the task end (the last backward's: its backward piece's
/// part) and queue as one: each receiver's messages take, after the later of their send and
/// the messages before them (of this micro-batch or an earlier one), the gap that separated
/// them from the ones before when the group ran alone, then the route's latency
/// (StageTransfer::cost). Groups are booked in the order their first message left, each
/// starting no earlier than the channels of its bottleneck are free: each channel stays busy
/// after a group's start for as long as that group kept it busy alone.
StageLevelStep compose_stage_level(const PipelinePlan& p, const StagePieceTimes& times);

}  // namespace fastsim::planner
