// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "sweep/point_record.h"
#include "sweep/sweep_spec.h"

namespace fastsim::sweep {

/// The most points (`fastsim sweep`) or designs (`fastsim explore`) run at a time: --jobs.
constexpr long kMaxJobs = 4096;

/// Which of a shard's points a run takes on, given what DIR already records.
struct PointSelection {
    std::vector<std::size_t> to_run;  ///< indices, in point order
    std::size_t in_shard = 0;
    std::size_t already_ok = 0;
    std::size_t failed_skipped = 0;  ///< recorded as failed and not retried
};
PointSelection select_points(const std::vector<SweepPoint>& points, const Shard& shard,
                             const std::map<std::size_t, PointRecord>& records, bool retry_failed);

/// Progress on stderr: a bar redrawn in place on a terminal, a line per finished point otherwise.
class ProgressMeter {
public:
    /// `already_ok` and `already_failed`: recorded before this run and not run again.
    ProgressMeter(std::size_t in_shard, std::size_t already_ok, std::size_t already_failed, std::size_t to_run,
                  bool terminal);
    void point_finished(const PointRecord& record);
    void set_running(std::size_t running);
    /// Redraws the bar (elapsed time and ETA move on a terminal even when no point finishes).
    void tick();
    void done();

private:
    [[nodiscard]] std::string status_text() const;
    std::size_t m_in_shard, m_done, m_to_run, m_failed, m_finished = 0, m_running = 0;
    bool m_terminal;
    double m_start_s;
};

struct LocalRunOptions {
    std::string out_dir;
    std::string exe;                      ///< what each point runs (point_executable())
    std::size_t jobs = 1;                 ///< points at a time
    double point_timeout_s = 0;           ///< kill a point after this long; 0: no limit
    std::vector<std::string> point_args;  ///< given to every point's `fastsim run` after its own (--max-work)
};

/// Runs `selection.to_run` as child processes, `jobs` at a time, writing each point's record
/// as it finishes. On SIGINT/SIGTERM/SIGHUP it stops starting points, ends the running ones
/// (which stay unrecorded, so a rerun redoes them) and returns. Returns the signal that stopped
/// the sweep (SIGINT, SIGTERM or SIGHUP), or 0 when every point ran.
int run_points_locally(const std::vector<SweepPoint>& points, const std::vector<std::size_t>& to_run,
                       const LocalRunOptions& options, ProgressMeter& progress);

}  // namespace fastsim::sweep
