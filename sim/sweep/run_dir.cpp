// SPDX-License-Identifier: MIT
#include "sweep/run_dir.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/json_reader.h"
#include "common/json_writer.h"
#include "common/output_files.h"
#include "common/summary.h"
#include "sweep/sweep_spec.h"

namespace fastsim::sweep {
namespace {

namespace fs = std::filesystem;

/// Every file or folder a fastsim command writes into a run directory, and `fastsim report`'s
/// report.html and plots/ made from it: a directory holding one of these holds a run.
constexpr std::array<const char*, 18> kRunFiles{
    "report.json",    "summary.json",        "layers.csv",     "nodes.csv",   "plan.json", "plan.csv",
    "config.yaml",    "compare.csv",         "accuracy.csv",   "cost.csv",    "time.csv",  "precision_log.csv",
    "comparison.csv", "schedule_checks.csv", "collective.csv", "report.html", "plots",     kRunManifest};

constexpr const char* kStagingPrefix = ".partial-";

bool present(const fs::path& p) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(p, ec));
}

void remove_all_or_throw(const fs::path& p, const std::string& what) {
    std::error_code ec;
    fs::remove_all(p, ec);
    if (ec) throw UserError("cannot remove " + p.string() + " (" + what + "): " + ec.message());
}

/// The top-level names an earlier run's manifest lists; nullopt without a readable manifest.
std::optional<std::vector<std::string>> manifest_names(const fs::path& dir) {
    const fs::path manifest = dir / kRunManifest;
    if (!present(manifest)) return std::nullopt;
    try {
        const JsonValue root = read_json_file(manifest.string());
        std::vector<std::string> names;
        if (const JsonValue* files = root.find("files"); files && files->is_array())
            for (const JsonValue& f : files->items())
                if (const JsonValue* name = f.find("name"); name && name->is_string()) {
                    // Only a plain name inside DIR: never "/", "..", or what a lock or stage is.
                    const fs::path listed(name->as_string());
                    if (listed.empty() || listed.is_absolute()) continue;
                    const std::string top = listed.begin()->string();
                    if (top.empty() || top == "." || top == ".." || top[0] == '.') continue;
                    if (std::find(names.begin(), names.end(), top) == names.end()) names.push_back(top);
                }
        return names;
    } catch (const UserError&) {
        return std::nullopt;  // unreadable: the names a run writes are removed instead
    }
}

/// Every regular file under `root`, as paths relative to it, sorted.
std::vector<std::string> files_under(const fs::path& root) {
    std::vector<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(root))
        if (entry.is_regular_file()) out.push_back(fs::relative(entry.path(), root).generic_string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string digest_of(const std::string& content) {
    std::uint64_t h = kFnvOffset;
    fnv1a(h, content);
    return hex_digest(h);
}

const JsonValue* member(const JsonValue& o, const char* key) { return o.is_object() ? o.find(key) : nullptr; }

std::optional<double> number_at(const JsonValue& o, const char* key) {
    const JsonValue* v = member(o, key);
    return v && v->is_number() ? std::optional<double>(v->as_number()) : std::nullopt;
}

/// True if `a` and `b` agree to the 9 significant digits reports are written with.
bool agree(double a, double b) { return std::abs(a - b) <= 1e-8 * std::max({1.0, std::abs(a), std::abs(b)}); }

}  // namespace

RunDirWriter::RunDirWriter(const std::string& dir, bool force, const std::string& command)
    : m_dir(dir), m_command(command) {
    std::error_code ec;
    if (present(dir) && !fs::is_directory(dir, ec)) throw UserError("--out " + dir + ": exists and is not a folder");
    fs::create_directories(dir, ec);
    if (ec) throw UserError("--out " + dir + ": cannot create the folder: " + ec.message());
    m_lock = std::make_unique<SweepDirLock>(dir, Shard{}, command);
    // Staging folders left by killed runs: this process holds the lock, so none is in use.
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.path().filename().string().rfind(kStagingPrefix, 0) == 0)
            remove_all_or_throw(entry.path(), "a killed run's unfinished files");
    if (!force)
        for (const char* name : kRunFiles)
            if (present(fs::path(dir) / name))
                throw UserError("--out " + dir + " holds another run (" + name +
                                "): use another folder, or --force to replace that run whole");
    m_staging = (fs::path(dir) / (kStagingPrefix + std::to_string(::getpid()))).string();
    fs::create_directory(m_staging, ec);
    if (ec) throw UserError("--out " + dir + ": cannot write into the folder: " + ec.message());
}

RunDirWriter::~RunDirWriter() {
    if (m_committed) return;
    std::error_code ec;
    fs::remove_all(m_staging, ec);  // best effort: a later run into DIR removes what is left
}

void RunDirWriter::write(const std::string& name, const std::string& content) const {
    write_file_atomically((fs::path(m_staging) / name).string(), content);
}

void RunDirWriter::commit(const std::string& fastsim_version) {
    const fs::path dir(m_dir), staging(m_staging);
    // The manifest, then the previous run's files, go first: from here to the new manifest the
    // directory is marked incomplete.
    const std::optional<std::vector<std::string>> listed = manifest_names(dir);
    remove_all_or_throw(dir / kRunManifest, "the previous run's manifest");
    std::vector<std::string> old(kRunFiles.begin(), kRunFiles.end());
    if (listed) old.insert(old.end(), listed->begin(), listed->end());
    for (const std::string& name : old)
        if (name != fs::path(m_staging).filename().string()) remove_all_or_throw(dir / name, "the previous run");
    JsonWriter manifest;
    manifest.begin_object(JsonLayout::one_per_line);
    manifest.key("command").string(m_command).key("fastsim_version").string(fastsim_version);
    manifest.key("files").begin_array(JsonLayout::one_per_line);
    for (const std::string& name : files_under(staging)) {
        const std::string content = read_input_file((staging / name).string(), "a staged run file");
        manifest.begin_object().key("name").string(name).key("bytes").integer(content.size());
        manifest.key("fnv1a").string(digest_of(content)).end_object();
    }
    manifest.end_array().end_object();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(staging)) {
        fs::rename(entry.path(), dir / entry.path().filename(), ec);
        if (ec) throw UserError("cannot move " + entry.path().string() + " into " + m_dir + ": " + ec.message());
    }
    write_file_atomically((dir / kRunManifest).string(), manifest.take());
    m_committed = true;
    fs::remove(staging, ec);
}

void check_complete_run(const std::string& dir) {
    const fs::path root(dir);
    const std::string incomplete = dir + " is not one complete run: ";
    if (present(root / kRunManifest)) {
        const JsonValue manifest = read_json_file((root / kRunManifest).string());
        const JsonValue* files = member(manifest, "files");
        if (!files || !files->is_array())
            throw UserError((root / kRunManifest).string() + ": files: expected the list of the run's files");
        for (const JsonValue& f : files->items()) {
            const JsonValue* name = member(f, "name");
            const std::optional<double> bytes = number_at(f, "bytes");
            const JsonValue* digest = member(f, "fnv1a");
            if (!name || !name->is_string() || !bytes || !digest || !digest->is_string())
                throw UserError((root / kRunManifest).string() + ": files: expected name, bytes and fnv1a of each");
            const fs::path path = root / name->as_string();
            if (!present(path))
                throw UserError(incomplete + name->as_string() + ", which its manifest lists, is missing");
            const std::string content = read_input_file(path.string(), "a run file");
            if (static_cast<double>(content.size()) != *bytes || digest_of(content) != digest->as_string())
                throw UserError(incomplete + name->as_string() +
                                " is not the file its run wrote (manifest.json); run it again, or delete the folder");
        }
        return;
    }
    // No manifest: a run written before manifests, or one cut short while committing. Its
    // report.json and summary.json must describe the same step.
    if (!present(root / "report.json") || !present(root / "summary.json")) return;
    const JsonValue report = read_json_file((root / "report.json").string());
    const JsonValue summary = read_json_file((root / "summary.json").string());
    const bool cluster = member(report, "simulated_step_s") != nullptr;
    const JsonValue* energy = member(report, "energy_pj");
    const std::optional<double> report_pj = !cluster ? number_at(report, "total_energy_pj")
                                            : energy ? number_at(*energy, "total")
                                                     : std::optional<double>();
    const std::optional<double> report_s = number_at(report, cluster ? "simulated_step_s" : "total_seconds");
    const std::optional<double> summary_uj = number_at(summary, std::string(kEnergyField).c_str());
    const std::optional<double> summary_ms =
        number_at(summary, std::string(cluster ? kClusterStepField : kNodeTimeField).c_str());
    const auto mixed = [&](const char* what, double in_summary, double in_report) {
        throw UserError(dir + " mixes two runs (it has no manifest.json, and its files disagree): summary.json's " +
                        what + " is " + format_number(in_summary) + ", report.json's " + format_number(in_report) +
                        "; run it again into an empty folder");
    };
    if (report_pj && summary_uj && !agree(*report_pj * 1e-6, *summary_uj))
        mixed("energy (uJ)", *summary_uj, *report_pj * 1e-6);
    if (report_s && summary_ms && !agree(*report_s * 1e3, *summary_ms))
        mixed("step (ms)", *summary_ms, *report_s * 1e3);
}

}  // namespace fastsim::sweep
