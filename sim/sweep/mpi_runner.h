// SPDX-License-Identifier: MIT
#pragma once

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

/// Rank of this process in MPI_COMM_WORLD, initialising MPI on first use; UserError
/// if built without MPI.
int mpi_rank();
/// MPI_Finalize if MPI was initialised.
void mpi_finalize();

}  // namespace fastsim::sweep
