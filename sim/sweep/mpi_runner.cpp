// SPDX-License-Identifier: MIT
#include "sweep/mpi_runner.h"

#include "common/errors.h"

#ifdef FASTSIM_WITH_MPI
#include <mpi.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>

#include "sweep/point_process.h"
#include "sweep/sweep_dir.h"
#endif

namespace fastsim::sweep {

#ifndef FASTSIM_WITH_MPI

namespace {
[[noreturn]] void no_mpi() {
    throw UserError(
        "--mpi: this fastsim was built without MPI (configure with cmake -DFASTSIM_WITH_MPI=ON; docs/sweeps.md)");
}
}  // namespace

bool mpi_available() { return false; }
int mpi_rank() { no_mpi(); }
void mpi_finalize() {}
void run_points_mpi(const std::vector<SweepPoint>&, const std::vector<std::size_t>&, const LocalRunOptions&,
                    ProgressMeter*) {
    no_mpi();
}
void serve_tasks_mpi(const std::function<std::string(std::size_t)>&) { no_mpi(); }
std::vector<std::string> run_tasks_mpi(const std::vector<std::size_t>&) { no_mpi(); }
void stop_tasks_mpi() {}
std::size_t mpi_task_workers() { no_mpi(); }

#else

namespace {

enum Tag : int { kWork = 1, kStop = 2, kDone = 3, kTask = 4, kTaskResult = 5, kTaskStop = 6 };

void ensure_initialised() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) MPI_Init(nullptr, nullptr);
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/// Runs point `index` to completion: 1 if it finished ok, 0 if it failed (recorded either way),
/// -1 if a stop signal ended it (left unrecorded, like the local runner).
int run_one(const std::vector<SweepPoint>& points, std::size_t index, const LocalRunOptions& options) {
    const SweepPoint& p = points.at(index);
    sigset_t mask;
    sigprocmask(SIG_SETMASK, nullptr, &mask);
    const double start = now_s();
    const pid_t pid = start_point(options.exe, p, point_dir(options.out_dir, p.id), options.point_args, mask);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFSIGNALED(status) && is_stop_signal(WTERMSIG(status))) return -1;
    return finish_point(p, point_dir(options.out_dir, p.id), status, now_s() - start).ok ? 1 : 0;
}

}  // namespace

bool mpi_available() { return true; }

int mpi_rank() {
    ensure_initialised();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

void mpi_finalize() {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised && !finalised) MPI_Finalize();
}

void run_points_mpi(const std::vector<SweepPoint>& points, const std::vector<std::size_t>& to_run,
                    const LocalRunOptions& options, ProgressMeter* progress) {
    ensure_initialised();
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        throw UserError(
            "--mpi needs at least 2 ranks (rank 0 hands out points, the others run them): mpirun -n K with K >= 2");
    if (rank != 0) {
        while (true) {
            long long index = 0;
            MPI_Status status;
            MPI_Recv(&index, 1, MPI_LONG_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            if (status.MPI_TAG == kStop) break;
            long long done[2] = {index, run_one(points, static_cast<std::size_t>(index), options)};
            MPI_Send(done, 2, MPI_LONG_LONG, 0, kDone, MPI_COMM_WORLD);
        }
        return;
    }
    std::size_t next = 0, busy = 0;
    const auto hand_out = [&](int worker) {
        if (next < to_run.size()) {
            const long long index = static_cast<long long>(to_run[next++]);
            MPI_Send(&index, 1, MPI_LONG_LONG, worker, kWork, MPI_COMM_WORLD);
            ++busy;
        } else {
            const long long none = -1;
            MPI_Send(&none, 1, MPI_LONG_LONG, worker, kStop, MPI_COMM_WORLD);
        }
        if (progress) progress->set_running(busy);
    };
    for (int worker = 1; worker < size; ++worker) hand_out(worker);
    while (busy > 0) {
        long long done[2];
        MPI_Status status;
        MPI_Recv(done, 2, MPI_LONG_LONG, MPI_ANY_SOURCE, kDone, MPI_COMM_WORLD, &status);
        --busy;
        if (progress && done[1] >= 0) {
            const SweepPoint& p = points.at(static_cast<std::size_t>(done[0]));
            if (auto record = read_point_record(
                    (std::filesystem::path(point_dir(options.out_dir, p.id)) / "point.json").string()))
                progress->point_finished(*record);
        }
        hand_out(status.MPI_SOURCE);
    }
}

namespace {

/// The ranks in the job (K); UserError if there are fewer than 2.
int task_world_size() {
    ensure_initialised();
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        throw UserError(
            "--mpi needs at least 2 ranks (rank 0 searches, the others evaluate designs): mpirun -n K with K >= 2");
    return size;
}

bool g_tasks_stopped = false;

}  // namespace

std::size_t mpi_task_workers() { return static_cast<std::size_t>(task_world_size() - 1); }

void serve_tasks_mpi(const std::function<std::string(std::size_t)>& work) {
    task_world_size();
    while (true) {
        unsigned long long task = 0;
        MPI_Status status;
        MPI_Recv(&task, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        if (status.MPI_TAG == kTaskStop) return;
        const std::string result = work(static_cast<std::size_t>(task));
        MPI_Send(result.data(), static_cast<int>(result.size()), MPI_BYTE, 0, kTaskResult, MPI_COMM_WORLD);
    }
}

std::vector<std::string> run_tasks_mpi(const std::vector<std::size_t>& tasks) {
    const int size = task_world_size();
    std::vector<std::string> results(tasks.size());
    std::vector<std::size_t> slot_of(static_cast<std::size_t>(size), 0);  // per rank: the task it runs
    std::size_t next = 0, busy = 0;
    const auto hand_out = [&](int worker) {
        if (next >= tasks.size()) return;
        const unsigned long long task = tasks[next];
        slot_of[static_cast<std::size_t>(worker)] = next++;
        MPI_Send(&task, 1, MPI_UNSIGNED_LONG_LONG, worker, kTask, MPI_COMM_WORLD);
        ++busy;
    };
    for (int worker = 1; worker < size; ++worker) hand_out(worker);
    while (busy > 0) {
        MPI_Status status;
        MPI_Probe(MPI_ANY_SOURCE, kTaskResult, MPI_COMM_WORLD, &status);
        int bytes = 0;
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        std::string result(static_cast<std::size_t>(bytes), '\0');
        MPI_Recv(result.data(), bytes, MPI_BYTE, status.MPI_SOURCE, kTaskResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        results[slot_of[static_cast<std::size_t>(status.MPI_SOURCE)]] = std::move(result);
        --busy;
        hand_out(status.MPI_SOURCE);
    }
    return results;
}

void stop_tasks_mpi() {
    if (g_tasks_stopped) return;
    g_tasks_stopped = true;
    const int size = task_world_size();
    const unsigned long long none = 0;
    for (int worker = 1; worker < size; ++worker)
        MPI_Send(&none, 1, MPI_UNSIGNED_LONG_LONG, worker, kTaskStop, MPI_COMM_WORLD);
}

#endif

}  // namespace fastsim::sweep
