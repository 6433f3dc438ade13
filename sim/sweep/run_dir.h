// SPDX-License-Identifier: MIT
// A directory one command writes as one run, whole or not at all (docs/cli.md, "Output
// directories"): `run`, `plan`, `compare` and `train --out DIR`. The writer stages every file in
// DIR/.partial-PID, replaces the previous run's files only once the run is complete and writes
// DIR/manifest.json last; readers (`report`, `diff`) check a directory against its manifest.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "common/interrupt_cleanup.h"
#include "sweep/sweep_dir.h"

namespace fastsim::sweep {

/// The completion mark, written last: every file of the run with its size and FNV-1a digest.
inline constexpr const char* kRunManifest = "manifest.json";

/// The files of one run of `command` into `dir`, staged until commit().
class RunDirWriter {
public:
    /// Before the work starts: locks DIR (DIR/.lock-1-of-1, the lock a sweep takes; UserError if
    /// another command holds it), refuses a DIR holding another run's files unless `force`, and
    /// creates the staging folder (so an unwritable DIR fails now, not after the work), which an
    /// interrupt (SIGINT, SIGTERM, SIGHUP) before commit() removes. Stale staging folders of
    /// killed runs are removed. UserError naming DIR for each.
    RunDirWriter(const std::string& dir, bool force, const std::string& command);
    /// Not committed (the work failed or threw): the staging folder and its files are removed and
    /// DIR keeps what it held; a DIR this writer created is removed again (with its lock).
    ~RunDirWriter();
    RunDirWriter(const RunDirWriter&) = delete;
    RunDirWriter& operator=(const RunDirWriter&) = delete;

    /// Where the run's files go until commit() (a writer may also create files there itself).
    [[nodiscard]] const std::string& staging() const { return m_staging; }
    /// Writes `name` (relative to the run, e.g. "report.json") into the staging folder.
    /// UserError naming the file if it cannot be written whole.
    void write(const std::string& name, const std::string& content) const;
    /// Removes the previous run's files from DIR (those its manifest lists, or of a run written
    /// before manifests, every file a fastsim run writes, and report.html and plots/), moves the
    /// staged files in, then writes manifest.json. A crash inside leaves no manifest: readers
    /// refuse the directory as incomplete.
    void commit(const std::string& fastsim_version);

private:
    std::string m_dir, m_staging, m_command;
    std::unique_ptr<SweepDirLock> m_lock;
    std::optional<RemovedOnInterrupt> m_staging_on_interrupt;  ///< until commit() starts
    bool m_committed = false;
    bool m_created = false;  ///< DIR did not exist before this writer
};

/// True if `dir` holds a run's files, a manifest, or what a commit cut short left.
bool holds_run(const std::string& dir);
/// Refuses (UserError naming `option` and the folder) to write a single output file at `path`
/// over a file of a run, sweep or exploration folder (report.json, layers.csv, results.csv...):
/// that folder is another command's result. report.html, which `report` writes into the folder
/// it reads, is not such a file.
void refuse_replacing_result_file(const std::string& path, const std::string& option);
/// The command that wrote the run `dir` holds (its manifest's `command`), or "" when that is not
/// known (no manifest, or none readable). Call after holds_run(dir).
std::string run_command(const std::string& dir);

/// Refuses (UserError naming DIR and the file) a directory that is not one complete run: one
/// whose command stopped while replacing its files, or a manifest whose files are missing or
/// differ from what the run wrote, or a run file it does not list. A folder with no manifest passes
/// (report::check_run_files_agree checks its files against each other).
void check_complete_run(const std::string& dir);

}  // namespace fastsim::sweep
