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

#else

namespace {

enum Tag : int { kWork = 1, kStop = 2, kDone = 3 };

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

#endif

}  // namespace fastsim::sweep
