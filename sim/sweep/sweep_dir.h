// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sweep/point_record.h"
#include "sweep/sweep_spec.h"

namespace fastsim::sweep {

/// DIR/sweep.json: which sweep a directory holds (docs/sweeps.md, "Output").
struct SweepIdentity {
    std::string name, sweep_file, base_config, fingerprint;  ///< "" when sweep.json leaves one out
    std::size_t points = 0;                                  ///< the sweep's points, from 1
    struct AxisColumns {
        std::string name;
        std::vector<std::string> keys;
    };
    std::vector<AxisColumns> axes;
    std::string plot_x, plot_series;

    [[nodiscard]] bool same_sweep(const SweepIdentity& other) const {
        return fingerprint == other.fingerprint && points == other.points;
    }
};

SweepIdentity identity_of(const SweepSpec& spec, const std::vector<SweepPoint>& points);
std::string sweep_json(const SweepIdentity& identity);
/// Reads DIR/sweep.json: `axes` and `points` are required, every other field optional (a
/// hand-written file may leave them out). UserError naming the file and key if it is missing or malformed.
SweepIdentity read_sweep_json(const std::string& dir);

/// Makes `dir` hold `identity`: writes sweep.json into a new or empty directory, accepts one
/// that already holds the same sweep (resume), refuses one that holds another.
void claim_sweep_dir(const std::string& dir, const SweepIdentity& identity);

/// An exclusive lock on DIR/.lock-K-of-N (flock) for the lifetime of the object: two runs of
/// one shard into one directory would run every point twice (different shards may share it).
/// UserError if another process holds it, naming `command` (sweep, explore, run, train...).
class SweepDirLock {
public:
    SweepDirLock(const std::string& dir, const Shard& shard, const std::string& command = "sweep");
    ~SweepDirLock();
    SweepDirLock(const SweepDirLock&) = delete;
    SweepDirLock& operator=(const SweepDirLock&) = delete;
    /// DIR/.lock-K-of-N.
    [[nodiscard]] const std::string& path() const { return m_path; }

private:
    int m_fd = -1;
    std::string m_path;
};

/// UserError naming `dir` if a command holds one of its locks (DIR/.lock-*): it is still being
/// written, so what it holds is not yet one complete result.
void refuse_while_written(const std::string& dir);

/// DIR/points/<id>
std::string point_dir(const std::string& dir, const std::string& id);
/// Every readable DIR/points/*/point.json of the sweep `identity`, by point index; an unreadable
/// one (a crash before the disk flushed it) is reported on stderr and skipped, so its point runs
/// again. UserError for a record whose index lies outside the sweep, whose id is not its
/// folder's or not its index's, whose index another record holds, whose values are not the
/// sweep's axis keys in order, or, when ok, whose results are not its folder's summary.json.
std::map<std::size_t, PointRecord> read_point_records(const std::string& dir, const SweepIdentity& identity);
/// An ok record's results (`record_file`) are its run's summary.json (`summary`), field for field,
/// when the point's folder still holds it; a folder that holds its run (manifest.json) must. UserError
/// naming both files otherwise: one was edited.
void check_results_against_summary(const PointRecord& record, const std::string& summary,
                                   const std::string& record_file);

/// results.csv: point, every axis key, status, the result columns (union over the points, in
/// order of first appearance), error. One row per record, in index order.
std::string results_csv(const SweepIdentity& identity, const std::map<std::size_t, PointRecord>& records);

/// One CSV cell: quoted (RFC 4180) when it holds a comma, quote or line break.
std::string csv_cell(const std::string& text);

}  // namespace fastsim::sweep
