// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sweep/runner.h"
#include "sweep/sweep_spec.h"

namespace fastsim::sweep {

/// True when this fastsim was built with -DFASTSIM_WITH_MPI=ON.
bool mpi_available();

/// One process of `mpirun -n K fastsim sweep ... --mpi`. Rank 0 hands out the indices in
/// `to_run` one at a time and shows progress; ranks 1..K-1 each run a point (as a child process,
/// exactly like the local runner, writing into the shared `options.out_dir`) and ask for the
/// next. Throws UserError if built without MPI or K < 2. `to_run` and `progress` are
/// only used on rank 0.
void run_points_mpi(const std::vector<SweepPoint>& points, const std::vector<std::size_t>& to_run,
                    const LocalRunOptions& options, ProgressMeter* progress);

/// Tasks by index, for `fastsim explore --mpi`: rank 0 calls run_tasks_mpi (as often as it
/// likes) and then stop_tasks_mpi; ranks 1..K-1 call serve_tasks_mpi, which runs `work` on each
/// task it is handed and sends back its bytes until rank 0 stops it. run_tasks_mpi returns the
/// results in the order of `tasks`. UserError if built without MPI or K < 2.
void serve_tasks_mpi(const std::function<std::string(std::size_t task)>& work);
std::vector<std::string> run_tasks_mpi(const std::vector<std::size_t>& tasks);
/// Ends every serve_tasks_mpi; idempotent. Rank 0 calls it on success and on failure alike.
void stop_tasks_mpi();
/// The number of ranks serving tasks (K - 1), initialising MPI on first use.
std::size_t mpi_task_workers();

/// Rank of this process in MPI_COMM_WORLD, initialising MPI on first use; UserError
/// if built without MPI.
int mpi_rank();
/// MPI_Finalize if MPI was initialised.
void mpi_finalize();

}  // namespace fastsim::sweep
