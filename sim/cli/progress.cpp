// SPDX-License-Identifier: MIT
#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/logging.h"

namespace fastsim::cli {
namespace {

std::string duration_text(double s) {
    char text[32];
    if (s < 120)
        std::snprintf(text, sizeof text, "%.0f s", s);
    else if (s < 7200)
        std::snprintf(text, sizeof text, "%.0f min", s / 60);
    else
        std::snprintf(text, sizeof text, "%.1f h", s / 3600);
    return text;
}

}  // namespace

ProgressLine::ProgressLine(std::string what, const run::WorkEstimate& estimate)
    : m_what(std::move(what)),
      m_estimate_s(estimate.seconds()),
      m_tty(::isatty(STDERR_FILENO) != 0),
      m_start(std::chrono::steady_clock::now()) {
    logger("work")->info("{}: estimated {:.3f} s: {}", m_what, m_estimate_s, estimate.describe());
    if (m_estimate_s <= run::kProgressBudgetSeconds) return;
    std::cerr << "fastsim: " << m_what << ": " << estimate.describe() << std::endl;
    m_thread = std::thread([this] { heartbeat(); });
}

ProgressLine::~ProgressLine() {
    if (!m_thread.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
    if (m_fraction.load(std::memory_order_relaxed) >= 1)
        print(true);
    else if (m_open_line)
        std::cerr << std::endl;
}

void ProgressLine::heartbeat() {
    const auto period = m_tty ? std::chrono::milliseconds(200) : std::chrono::milliseconds(10'000);
    std::unique_lock<std::mutex> lock(m_mutex);
    while (!m_wake.wait_for(lock, period, [this] { return m_stop; })) print(false);
}

void ProgressLine::print(bool final_line) {
    const double fraction = std::clamp(m_fraction.load(std::memory_order_relaxed), 0.0, 1.0);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    // Runs report at checkpoints, so the fraction can stand still for a while: the line gives
    // it with the elapsed time and the estimate, not a countdown that would jump.
    std::string line = "fastsim: " + m_what + ": " + std::to_string(static_cast<int>(fraction * 100)) +
                       "% done after " + duration_text(elapsed);
    if (!final_line) line += " (estimated " + duration_text(m_estimate_s) + " in all)";
    if (m_tty) {
        std::cerr << "\r" << line << "\033[K" << (final_line ? "\n" : "") << std::flush;
        m_open_line = !final_line;
    } else {
        std::cerr << line << std::endl;
    }
}

}  // namespace fastsim::cli
