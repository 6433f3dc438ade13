// SPDX-License-Identifier: MIT
#include "sweep/point_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "common/output_files.h"

namespace fastsim::sweep {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxErrorChars = 500;

/// The last non-empty line of a text file (the child's "fastsim: error: ..." line).
std::string last_line(const std::string& path) {
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    if (last.size() > kMaxErrorChars) last = last.substr(0, kMaxErrorChars) + "...";
    return last;
}

}  // namespace

bool is_stop_signal(int signal) { return signal == SIGINT || signal == SIGTERM || signal == SIGHUP; }

std::string signal_name(int signal) {
    switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(signal);
    }
}

std::string point_executable() {
    if (const char* exe = std::getenv("FASTSIM_SWEEP_EXE"); exe && *exe) {
        std::string found = exe;
        if (found.find('/') == std::string::npos) {
            found.clear();
            std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
            for (std::size_t start = 0; start <= path.size();) {
                const std::size_t end = std::min(path.find(':', start), path.size());
                const fs::path candidate = fs::path(path.substr(start, end - start)) / exe;
                if (::access(candidate.c_str(), X_OK) == 0) {
                    found = candidate.string();
                    break;
                }
                start = end + 1;
            }
        }
        std::error_code ec;
        if (found.empty() || !fs::is_regular_file(found, ec) || ::access(found.c_str(), X_OK) != 0)
            throw UserError(std::string("FASTSIM_SWEEP_EXE=") + exe + ": not an executable file" +
                            (found.empty() ? " on PATH" : ""));
        return found;
    }
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        throw UserError("cannot find this executable (/proc/self/exe): " + ec.message() + "; set FASTSIM_SWEEP_EXE");
    return self.string();
}

pid_t start_point(const std::string& exe, const SweepPoint& point, const std::string& point_dir,
                  const std::vector<std::string>& extra_args, const sigset_t& child_signal_mask) {
    fs::create_directories(point_dir);
    std::error_code ec;
    fs::remove(fs::path(point_dir) / "summary.json", ec);  // a rerun must not read an earlier run's results
    std::vector<std::string> args{exe, "run", point.base_config};
    for (const std::string& o : point.overrides) {
        args.push_back("-p");
        args.push_back(o);
    }
    // --force: a point run again (failed, or retried) replaces its earlier run whole.
    args.insert(args.end(), {"--out", point_dir, "--force"});
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    // Everything the child needs is prepared before fork(): after it only async-signal-safe calls.
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out_path = (fs::path(point_dir) / "stdout.txt").string();
    const std::string err_path = (fs::path(point_dir) / "stderr.txt").string();
    const pid_t parent = ::getpid();

    const pid_t pid = ::fork();
    if (pid < 0) throw UserError(std::string("cannot start a point process: fork: ") + std::strerror(errno));
    if (pid > 0) ::setpgid(pid, pid);  // also here, so a kill(-pid) right after fork finds the group
    if (pid == 0) {
        ::setpgid(0, 0);  // its own group: a wrapper's children are stopped with it
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);  // the sweep died before prctl took effect
        ::sigprocmask(SIG_SETMASK, &child_signal_mask, nullptr);
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (out < 0 || err < 0) ::_exit(126);
        ::dup2(out, STDOUT_FILENO);
        ::dup2(err, STDERR_FILENO);
        ::execv(argv[0], argv.data());
        const char* what = "fastsim sweep: cannot execute the point program (set FASTSIM_SWEEP_EXE?)\n";
        (void)!::write(STDERR_FILENO, what, std::strlen(what));
        ::_exit(127);
    }
    return pid;
}

PointRecord finish_point(const SweepPoint& point, const std::string& point_dir, int wait_status, double wall_s,
                         const std::string& failure) {
    PointRecord r;
    r.id = point.id;
    r.index = point.index;
    r.wall_s = wall_s;
    r.base_config = point.base_config;
    r.values = point.values;
    r.overrides = point.overrides;
    if (WIFEXITED(wait_status)) r.exit_status = WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) r.signal = signal_name(WTERMSIG(wait_status));
    const std::string stderr_path = (fs::path(point_dir) / "stderr.txt").string();
    if (!failure.empty()) {
        r.error = failure;
    } else if (!r.signal.empty()) {
        const std::string last = last_line(stderr_path);
        r.error = "killed by " + r.signal + (last.empty() ? "" : ": " + last);
    } else if (r.exit_status != 0) {
        const std::string last = last_line(stderr_path);
        r.error = "exit status " + std::to_string(*r.exit_status) + (last.empty() ? "" : ": " + last);
    } else {
        try {
            r.results = read_summary((fs::path(point_dir) / "summary.json").string());
            r.ok = true;
        } catch (const UserError& e) {
            r.error = std::string("exit status 0 but no results: ") + e.what();
        }
    }
    fastsim::write_file_atomically((fs::path(point_dir) / "point.json").string(), point_record_json(r));
    return r;
}

}  // namespace fastsim::sweep
