// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "run/work.h"

namespace fastsim::cli {

/// Progress of a long run on stderr, at the default log level (docs/cli.md, "Work limit"):
/// when the estimate exceeds run::kProgressBudgetSeconds, prints the estimate once, then from
/// a background thread a line that rewrites itself on a terminal (5 times a second) or, when
/// stderr is not a terminal, a line every 10 s, with the last fraction the run reported, the
/// elapsed time and the estimate. Silent for short runs.
class ProgressLine {
public:
    ProgressLine(std::string what, const run::WorkEstimate& estimate);
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;
    /// Stops the thread; prints a final line if the run reported all its work done.
    ~ProgressLine();

    /// Reports `fraction` (0 … 1) of the work done; cheap, safe from any thread.
    void update(double fraction) { m_fraction.store(fraction, std::memory_order_relaxed); }
    /// The callback a run takes (run::WorkProgress); valid while this object lives.
    [[nodiscard]] run::WorkProgress callback() {
        return [this](double fraction) { update(fraction); };
    }

private:
    void heartbeat();
    void print(bool final_line);

    std::string m_what;
    double m_estimate_s = 0;
    bool m_tty = false;
    std::chrono::steady_clock::time_point m_start;
    std::atomic<double> m_fraction{0};
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    bool m_open_line = false;  ///< a terminal line was written and not yet ended
    std::thread m_thread;      ///< only when the run is long enough to show progress
};

}  // namespace fastsim::cli
