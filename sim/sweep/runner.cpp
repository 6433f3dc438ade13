// SPDX-License-Identifier: MIT
#include "sweep/runner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "sweep/point_process.h"
#include "common/output_files.h"
#include "sweep/sweep_dir.h"

namespace fastsim::sweep {
namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string clock_text(double seconds) {
    const long s = std::lround(seconds);
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

/// Seconds the points get to end after SIGTERM when the sweep is stopped, before SIGKILL.
constexpr double kStopGraceS = 5.0;

struct Running {
    std::size_t index;
    double start_s;
    bool timed_out = false;
};

}  // namespace

PointSelection select_points(const std::vector<SweepPoint>& points, const Shard& shard,
                             const std::map<std::size_t, PointRecord>& records, bool retry_failed) {
    PointSelection s;
    for (const SweepPoint& p : points) {
        if (!shard.contains(p.index)) continue;
        ++s.in_shard;
        const auto r = records.find(p.index);
        if (r != records.end() && r->second.ok)
            ++s.already_ok;
        else if (r != records.end() && !retry_failed)
            ++s.failed_skipped;
        else
            s.to_run.push_back(p.index);
    }
    return s;
}

ProgressMeter::ProgressMeter(std::size_t in_shard, std::size_t already_ok, std::size_t already_failed,
                             std::size_t to_run, bool terminal)
    : m_in_shard(in_shard),
      m_done(already_ok + already_failed),
      m_to_run(to_run),
      m_failed(already_failed),
      m_terminal(terminal),
      m_start_s(now_s()) {}

std::string ProgressMeter::status_text() const {
    std::ostringstream o;
    const double elapsed = now_s() - m_start_s;
    o << m_done << "/" << m_in_shard << " points done, " << m_failed << " failed";
    if (m_terminal) o << ", " << m_running << " running";
    o << ", elapsed " << clock_text(elapsed);
    if (m_finished > 0 && m_finished < m_to_run)
        o << ", ETA "
          << clock_text(elapsed / static_cast<double>(m_finished) * static_cast<double>(m_to_run - m_finished));
    return o.str();
}

void ProgressMeter::point_finished(const PointRecord& r) {
    ++m_finished;
    ++m_done;
    if (!r.ok) ++m_failed;
    if (m_terminal) {
        if (!r.ok) std::cerr << "\r\x1b[K" << r.id << " failed: " << r.error << "\n";
        tick();
    } else {
        std::ostringstream line;
        line.precision(3);
        line << "sweep: " << r.id << (r.ok ? " ok" : " FAILED") << " in " << r.wall_s << " s"
             << (r.ok ? "" : " (" + r.error + ")") << "; " << status_text() << "\n";
        std::cerr << line.str() << std::flush;
    }
}

void ProgressMeter::set_running(std::size_t running) { m_running = running; }

void ProgressMeter::tick() {
    if (!m_terminal) return;
    constexpr std::size_t kWidth = 24;
    const std::size_t filled = m_in_shard ? m_done * kWidth / m_in_shard : kWidth;
    std::cerr << "\r\x1b[K[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << status_text()
              << std::flush;
}

void ProgressMeter::done() {
    if (m_terminal) {
        tick();
        std::cerr << "\n";
    }
}

int run_points_locally(const std::vector<SweepPoint>& points, const std::vector<std::size_t>& to_run,
                       const LocalRunOptions& options, ProgressMeter& progress) {
    // Signals are taken synchronously (sigtimedwait), so no handler runs inside the loop. SIGCHLD
    // must not be ignored (an inherited SIG_IGN would let the kernel reap the children unseen).
    struct sigaction default_chld {};
    default_chld.sa_handler = SIG_DFL;
    struct sigaction previous_chld {};
    sigaction(SIGCHLD, &default_chld, &previous_chld);
    sigset_t watched, previous;
    sigemptyset(&watched);
    for (const int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&watched, s);
    sigprocmask(SIG_BLOCK, &watched, &previous);

    int interrupted_by = 0;
    std::map<pid_t, Running> running;  // pid = the child's process group
    std::size_t next = 0;
    double interrupted_at = 0;
    const auto reap = [&](pid_t pid, int status) {
        const auto it = running.find(pid);
        if (it == running.end()) return;
        const Running r = it->second;
        running.erase(it);
        progress.set_running(running.size());
        const SweepPoint& p = points[r.index];
        const bool timed_out = r.timed_out && WIFSIGNALED(status);
        // Stopped from outside (Ctrl-C, scancel, kill of the job) or while the sweep stops: the
        // point was in flight, not failed. Leave it unrecorded so a rerun redoes it.
        if (!timed_out && WIFSIGNALED(status) && is_stop_signal(WTERMSIG(status))) return;
        if (!timed_out && interrupted_by != 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) return;
        const std::string failure =
            timed_out ? "timed out after " + fastsim::format_number(options.point_timeout_s) + " s (--point-timeout-s)"
                      : "";
        const PointRecord record =
            finish_point(p, point_dir(options.out_dir, p.id), status, now_s() - r.start_s, failure);
        progress.point_finished(record);
    };
    const auto stop_all = [&](int sig) {
        for (const auto& [group, r] : running) kill(-group, sig);
    };

    while (true) {
        while (interrupted_by == 0 && running.size() < options.jobs && next < to_run.size()) {
            const SweepPoint& p = points[to_run[next++]];
            const pid_t pid =
                start_point(options.exe, p, point_dir(options.out_dir, p.id), options.point_args, previous);
            running[pid] = Running{p.index, now_s()};
            progress.set_running(running.size());
        }
        if (running.empty()) break;
        // Wake to redraw the bar every 0.25 s, and at the first point's timeout to stop it then.
        double wait_s = 0.25;
        if (options.point_timeout_s > 0)
            for (const auto& [group, r] : running)
                if (!r.timed_out) wait_s = std::min(wait_s, r.start_s + options.point_timeout_s - now_s());
        wait_s = std::max(wait_s, 0.001);
        const auto wait_ns = static_cast<long>(wait_s * 1e9);
        const timespec wait{wait_ns / 1'000'000'000, wait_ns % 1'000'000'000};
        siginfo_t info;
        const int sig = sigtimedwait(&watched, &info, &wait);
        if (is_stop_signal(sig)) {
            if (interrupted_by == 0) {
                interrupted_by = sig;
                interrupted_at = now_s();
                stop_all(SIGTERM);
            } else {
                stop_all(SIGKILL);  // a second signal: no more waiting
            }
        }
        if (interrupted_by != 0 && now_s() - interrupted_at > kStopGraceS) stop_all(SIGKILL);
        int status = 0;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) reap(pid, status);
        if (pid < 0 && errno == ECHILD && !running.empty())
            throw std::runtime_error("sweep: " + std::to_string(running.size()) +
                                     " point process(es) vanished without an exit status");
        if (options.point_timeout_s > 0) {
            const double now = now_s();
            for (auto& [group, r] : running)
                if (!r.timed_out && now - r.start_s > options.point_timeout_s) {
                    r.timed_out = true;
                    kill(-group, SIGKILL);
                }
        }
        progress.tick();
    }
    const timespec no_wait{0, 0};
    siginfo_t info;
    while (sigtimedwait(&watched, &info, &no_wait) > 0) {
    }  // a second Ctrl-C must not kill the sweep before it writes results.csv
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    sigaction(SIGCHLD, &previous_chld, nullptr);
    return interrupted_by;
}

}  // namespace fastsim::sweep
