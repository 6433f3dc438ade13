// SPDX-License-Identifier: MIT
#pragma once

#include <sys/types.h>

#include <string>

#include "sweep/point_record.h"
#include "sweep/sweep_spec.h"

namespace fastsim::sweep {

/// Starts `exe run BASE -p o... --out POINT_DIR EXTRA_ARGS...` as a child process, its stdout and stderr in
/// POINT_DIR/stdout.txt and stderr.txt. The child leads a process group of its own (signal it
/// with kill(-pid, ...)), dies with the caller (PR_SET_PDEATHSIG) and starts with
/// `child_signal_mask`. Throws UserError if it cannot fork.
pid_t start_point(const std::string& exe, const SweepPoint& point, const std::string& point_dir,
                  const std::vector<std::string>& extra_args, const sigset_t& child_signal_mask);

/// Records a point whose child ended with `wait_status` (from waitpid) after `wall_s` seconds:
/// reads its summary.json, writes POINT_DIR/point.json atomically, returns the record.
/// `failure` overrides the error text (for example a timeout).
PointRecord finish_point(const SweepPoint& point, const std::string& point_dir, int wait_status, double wall_s,
                         const std::string& failure = "");

/// SIGINT, SIGTERM, SIGHUP: signals that stop a sweep (or, sent to a point, mean it was stopped
/// from outside rather than failed).
bool is_stop_signal(int signal);

/// "SIGSEGV" and the like; "signal N" for others.
std::string signal_name(int signal);

/// The program each point runs: $FASTSIM_SWEEP_EXE if set (a wrapper, for example; looked up on
/// PATH when it has no '/'), else this executable (/proc/self/exe). UserError if it is
/// not an executable file.
std::string point_executable();

}  // namespace fastsim::sweep
