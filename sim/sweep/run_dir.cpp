// SPDX-License-Identifier: MIT
#include "sweep/run_dir.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/json_reader.h"
#include "common/json_writer.h"
#include "common/output_files.h"
#include "sweep/sweep_spec.h"

namespace fastsim::sweep {
namespace {

namespace fs = std::filesystem;

/// Files only a fastsim run writes: a folder holding one of these (or a manifest) holds a run.
constexpr std::array<const char*, 7> kRunEvidence{"report.json",    "summary.json", "plan.json",     "compare.csv",
                                                  "comparison.csv", "accuracy.csv", "collective.csv"};
/// Every other name a run writes, and `fastsim report`'s report.html and plots/ made from it: a
/// folder of an earlier version (no manifest) that holds a run loses these with it.
constexpr std::array<const char*, 9> kRunFiles{"layers.csv", "nodes.csv", "plan.csv",          "config.yaml",
                                               "cost.csv",   "time.csv",  "precision_log.csv", "schedule_checks.csv",
                                               "report.html"};
/// The commands that write a run folder (manifest.json's `command`).
constexpr std::array<const char*, 7> kRunCommands{"run",        "plan",     "compare", "train",
                                                  "collective", "scalesim", "explore"};
constexpr const char* kPlotsFolder = "plots";
constexpr const char* kStagingPrefix = ".partial-";
constexpr const char* kAsidePrefix = ".old-";
/// Present while a commit replaces files: one top-level name moved in per line.
constexpr const char* kCommitting = ".committing";

bool present(const fs::path& p) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(p, ec));
}

/// FNV-1a (64-bit) of a file's bytes, streamed, and its size.
std::string file_digest(const fs::path& path, std::uintmax_t& bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UserError("cannot read " + path.string());
    std::uint64_t h = kFnvOffset;
    bytes = 0;
    std::array<char, 1 << 16> buffer{};
    while (in) {
        in.read(buffer.data(), buffer.size());
        const std::streamsize n = in.gcount();
        for (std::streamsize i = 0; i < n; ++i) {
            h ^= static_cast<unsigned char>(buffer[static_cast<std::size_t>(i)]);
            h *= 0x100000001B3ULL;
        }
        bytes += static_cast<std::uintmax_t>(n);
    }
    if (in.bad()) throw UserError("cannot read " + path.string());
    return hex_digest(h);
}

/// A plain name inside DIR: never absolute, "..", or what a lock, stage or aside folder is.
std::optional<std::string> top_name(const std::string& listed) {
    const fs::path p(listed);
    if (p.empty() || p.is_absolute()) return std::nullopt;
    const std::string top = p.begin()->string();
    if (top.empty() || top == "." || top == ".." || top[0] == '.') return std::nullopt;
    return top;
}

/// The top-level names a manifest lists; nullopt without a readable fastsim manifest.
std::optional<std::vector<std::string>> manifest_names(const fs::path& manifest) {
    if (!present(manifest)) return std::nullopt;
    try {
        const JsonValue root = read_json_file(manifest.string());
        const JsonValue* files = root.is_object() ? root.find("files") : nullptr;
        if (!files || !files->is_array() || !root.find("fastsim_version")) return std::nullopt;
        std::vector<std::string> names;
        for (const JsonValue& f : files->items())
            if (const JsonValue* name = f.is_object() ? f.find("name") : nullptr; name && name->is_string())
                if (const std::optional<std::string> top = top_name(name->as_string());
                    top && std::find(names.begin(), names.end(), *top) == names.end())
                    names.push_back(*top);
        return names;
    } catch (const UserError&) {
        return std::nullopt;
    }
}

/// What of DIR's earlier run a commit replaces: with a manifest, what it lists (and report.html,
/// plots/); of an earlier version, every name a run writes, if DIR holds a run at all.
std::vector<std::string> earlier_run(const fs::path& dir) {
    std::vector<std::string> names{kRunManifest, "report.html", kPlotsFolder};
    if (const auto listed = manifest_names(dir / kRunManifest)) {
        names.insert(names.end(), listed->begin(), listed->end());
        return names;
    }
    if (std::none_of(kRunEvidence.begin(), kRunEvidence.end(), [&](const char* n) { return present(dir / n); }))
        return {};
    names.insert(names.end(), kRunEvidence.begin(), kRunEvidence.end());
    names.insert(names.end(), kRunFiles.begin(), kRunFiles.end());
    return names;
}

/// Every regular file under `root`, as paths relative to it, sorted.
std::vector<std::string> files_under(const fs::path& root) {
    std::vector<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(root))
        if (entry.is_regular_file()) out.push_back(fs::relative(entry.path(), root).generic_string());
    std::sort(out.begin(), out.end());
    return out;
}

/// Moves `from` to `to` (replacing what is there); UserError naming both.
void move(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    if (present(to)) fs::remove_all(to, ec);
    if (!ec) fs::rename(from, to, ec);
    if (ec) throw UserError("cannot move " + from.string() + " to " + to.string() + ": " + ec.message());
}

/// Undoes an unfinished commit: the names it moved in (listed in .committing, written once the
/// earlier run's files were all aside) go, the earlier run's files come back from `aside`, and
/// the marker goes last.
void roll_back(const fs::path& dir, const fs::path& aside) {
    std::error_code ec;
    if (present(dir / kCommitting)) {
        std::ifstream moved_in(dir / kCommitting);
        for (std::string name; std::getline(moved_in, name);)
            if (const std::optional<std::string> top = top_name(name)) fs::remove_all(dir / *top, ec);
        fs::remove(dir / kRunManifest, ec);
    }
    if (!aside.empty() && fs::is_directory(aside, ec)) {
        for (const auto& entry : fs::directory_iterator(aside)) move(entry.path(), dir / entry.path().filename());
        fs::remove_all(aside, ec);
    }
    fs::remove(dir / kCommitting, ec);
}

/// The aside folders (.old-*) in `dir`.
std::vector<fs::path> aside_folders(const fs::path& dir) {
    std::vector<fs::path> asides;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return asides;  // the reader names a missing folder itself
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.path().filename().string().rfind(kAsidePrefix, 0) == 0) asides.push_back(entry.path());
    return asides;
}

const JsonValue* member(const JsonValue& o, const char* key) { return o.is_object() ? o.find(key) : nullptr; }

std::optional<double> number_at(const JsonValue& o, const char* key) {
    const JsonValue* v = member(o, key);
    return v && v->is_number() ? std::optional<double>(v->as_number()) : std::nullopt;
}

}  // namespace

RunDirWriter::RunDirWriter(const std::string& dir, bool force, const std::string& command)
    : m_dir(dir), m_command(command) {
    const fs::path root(dir);
    std::error_code ec;
    if (present(root) && !fs::is_directory(root, ec)) throw UserError("--out " + dir + ": exists and is not a folder");
    // A sweep's or an exploration's folder is not a run's, even with --force: its files would stay
    // beside the run's, and `fastsim report` would draw one of the two.
    for (const auto& [file, what] :
         {std::pair<const char*, const char*>{"sweep.json", "a sweep"}, {"explore.json", "an exploration"}})
        if (present(root / file))
            throw UserError("--out " + dir + " holds " + what + " (" + file +
                            "): a run writes a folder of its own; use another folder");
    m_created = !present(root);
    fs::create_directories(root, ec);
    if (ec) throw UserError("--out " + dir + ": cannot create the folder: " + ec.message());
    m_lock = std::make_unique<SweepDirLock>(dir, Shard{}, command);
    try {
        // What a killed command left (this process holds the lock, so nothing else is using it):
        // a commit cut short is rolled back (its marker, or an aside folder with no manifest
        // beside it: it died moving the earlier run aside), then stages and aside folders go.
        const std::vector<fs::path> asides = aside_folders(root);
        if (present(root / kCommitting) || (!asides.empty() && !present(root / kRunManifest))) {
            if (asides.size() > 1)
                throw UserError("--out " + dir + ": an interrupted commit left several " + kAsidePrefix +
                                "* folders; move the run you want to keep out of it by hand");
            roll_back(root, asides.empty() ? fs::path() : asides.front());
        }
        for (const auto& entry : fs::directory_iterator(root)) {
            const std::string name = entry.path().filename().string();
            if (name.rfind(kStagingPrefix, 0) == 0 || name.rfind(kAsidePrefix, 0) == 0) fs::remove_all(entry.path());
        }
    } catch (const fs::filesystem_error& e) {
        throw UserError("--out " + dir + ": cannot clear what an interrupted command left: " + e.what());
    }
    if (!force) {
        for (const char* name : kRunEvidence)
            if (present(root / name) || present(root / kRunManifest))
                throw UserError("--out " + dir + " holds another run (" +
                                (present(root / kRunManifest) ? std::string(kRunManifest) : name) +
                                "): use another folder, or --force to replace that run whole");
        for (const char* name : kRunFiles)
            if (present(root / name))
                throw UserError("--out " + dir + " holds " + name +
                                ", a name a run writes: use another folder, or --force to replace it");
    }
    m_staging = (root / (kStagingPrefix + std::to_string(::getpid()))).string();
    fs::create_directory(m_staging, ec);
    if (ec) throw UserError("--out " + dir + ": cannot write into the folder: " + ec.message());
    m_staging_on_interrupt.emplace(m_staging);
}

RunDirWriter::~RunDirWriter() {
    if (m_committed) return;
    std::error_code ec;
    fs::remove_all(m_staging, ec);  // best effort: a later command into DIR removes what is left
    if (!m_created) return;
    // A folder made for this run, which failed: absent again, as it was (unless something else
    // was put in it meanwhile; fs::remove takes only an empty folder).
    fs::remove(m_lock->path(), ec);  // while still locked: no other command can hold it meanwhile
    m_lock.reset();
    fs::remove(m_dir, ec);
}

void RunDirWriter::write(const std::string& name, const std::string& content) const {
    write_file_atomically((fs::path(m_staging) / name).string(), content);
}

void RunDirWriter::commit(const std::string& fastsim_version) {
    // From here an interrupt leaves the staging folder: a commit cut short is put back by the
    // next command into DIR, which needs it.
    m_staging_on_interrupt.reset();
    const fs::path dir(m_dir), staging(m_staging);
    const fs::path aside = dir / (kAsidePrefix + std::to_string(::getpid()));
    // (1) The manifest, before DIR changes: a file that cannot be read fails the run here.
    std::vector<std::string> staged;
    JsonWriter manifest;
    try {
        for (const auto& entry : fs::directory_iterator(staging)) staged.push_back(entry.path().filename().string());
        manifest.begin_object(JsonLayout::one_per_line);
        manifest.key("command").string(m_command).key("fastsim_version").string(fastsim_version);
        manifest.key("files").begin_array(JsonLayout::one_per_line);
        for (const std::string& name : files_under(staging)) {
            std::uintmax_t bytes = 0;
            const std::string digest = file_digest(staging / name, bytes);
            manifest.begin_object().key("name").string(name).key("bytes").integer(bytes);
            manifest.key("fnv1a").string(digest).end_object();
        }
        manifest.end_array().end_object();
    } catch (const fs::filesystem_error& e) {
        throw UserError("cannot read the run's files in " + m_staging + ": " + e.what());
    }
    // (2) The earlier run's files move aside (the manifest first), the marker names what moves
    //     in, the new files move in, and the manifest is written last. Any failure puts the
    //     earlier run back; a killed commit is put back by the next command into DIR.
    std::vector<std::string> replaced = earlier_run(dir);
    replaced.insert(replaced.end(), staged.begin(), staged.end());
    try {
        fs::create_directory(aside);
        for (const std::string& name : replaced)
            if (present(dir / name) && !present(aside / name)) move(dir / name, aside / name);
        std::string names;
        for (const std::string& n : staged) names += n + "\n";
        write_file_atomically((dir / kCommitting).string(), names);
        for (const std::string& name : staged) move(staging / name, dir / name);
        write_file_atomically((dir / kRunManifest).string(), manifest.take());
    } catch (const std::exception& e) {
        try {
            roll_back(dir, aside);
        } catch (const std::exception& again) {
            throw UserError("cannot replace the run in " + m_dir + " (" + e.what() +
                            "), nor put the earlier one back (" + again.what() + "): it is in " + aside.string());
        }
        throw UserError("cannot replace the run in " + m_dir + ": " + e.what() + "; the earlier run is kept");
    }
    m_committed = true;
    std::error_code ec;
    fs::remove(dir / kCommitting, ec);
    fs::remove_all(aside, ec);
    fs::remove(staging, ec);
}

bool holds_run(const std::string& dir) {
    const fs::path root(dir);
    std::error_code ec;
    return fs::is_directory(root, ec) &&
           (present(root / kRunManifest) || present(root / kCommitting) || !aside_folders(root).empty() ||
            std::any_of(kRunEvidence.begin(), kRunEvidence.end(), [&](const char* n) { return present(root / n); }));
}

void refuse_replacing_result_file(const std::string& path, const std::string& option) {
    const fs::path target(path);
    const std::string name = target.filename().string();
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    static const std::array<const char*, 7> kCollectionFiles{"sweep.json", "results.csv", "explore.json", "designs.csv",
                                                             "pareto.csv", "space.yaml",  "manifest.json"};
    const auto named = [&](const auto& names) {
        return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
    };
    const bool collection = present(dir / "sweep.json") || present(dir / "explore.json");
    const bool owned = (holds_run(dir.string()) && (named(kRunEvidence) || named(kRunFiles) || name == kRunManifest) &&
                        name != "report.html") ||
                       (collection && named(kCollectionFiles));
    if (owned && present(target))
        throw UserError(option + " " + path + ": " + name + " is a file of the fastsim result in " + dir.string() +
                        ", which this would overwrite; write to another path");
}

namespace {

/// "MAJOR.MINOR.PATCH" as three numbers; nullopt for anything else.
std::optional<std::array<unsigned long, 3>> version_numbers(const std::string& text) {
    std::array<unsigned long, 3> out{};
    std::size_t at = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::size_t end = i + 1 < out.size() ? text.find('.', at) : text.size();
        if (end == std::string::npos || end == at || end - at > 6) return std::nullopt;
        for (std::size_t c = at; c < end; ++c)
            if (text[c] < '0' || text[c] > '9') return std::nullopt;
        out[i] = std::stoul(text.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

/// A manifest's fastsim_version names a version no newer than this one: a later fastsim's files
/// may hold what this one does not read. UserError naming `file` otherwise.
void check_written_by_this_version(const JsonValue* written, const std::string& file) {
    const auto ours = version_numbers(FASTSIM_VERSION);
    const auto theirs = written && written->is_string() ? version_numbers(written->as_string()) : std::nullopt;
    if (!theirs)
        throw UserError(file + ": fastsim_version: expected the version of fastsim that wrote the run, such as " +
                        std::string(FASTSIM_VERSION));
    if (ours && *theirs > *ours)
        throw UserError(file + ": fastsim_version: the run was written by fastsim " + written->as_string() +
                        ", newer than this fastsim (" + FASTSIM_VERSION +
                        "), whose files this one may misread: read it with that version or later");
}

}  // namespace

std::string run_command(const std::string& dir) {
    const fs::path manifest = fs::path(dir) / kRunManifest;
    if (!present(manifest)) return "";
    try {
        const JsonValue json = read_json_file(manifest.string());  // kept: `command` points into it
        const JsonValue* command = member(json, "command");
        return command && command->is_string() ? command->as_string() : "";
    } catch (const UserError&) {
        return "";
    }
}

void check_complete_run(const std::string& dir) {
    const fs::path root(dir);
    const std::string incomplete = dir + " is not one complete run: ";
    if (present(root / kCommitting) || !aside_folders(root).empty())
        throw UserError(incomplete + "its command stopped while replacing its files (" + kCommitting + " or " +
                        kAsidePrefix + "*); the next fastsim command writing into it puts the earlier run back");
    if (present(root / kRunManifest)) {
        const JsonValue manifest = read_json_file((root / kRunManifest).string());
        const JsonValue* files = member(manifest, "files");
        if (!files || !files->is_array())
            throw UserError((root / kRunManifest).string() + ": files: expected the list of the run's files");
        const JsonValue* command = member(manifest, "command");
        if (!command || !command->is_string() ||
            std::find(kRunCommands.begin(), kRunCommands.end(), command->as_string()) == kRunCommands.end())
            throw UserError((root / kRunManifest).string() +
                            ": command: expected the fastsim command that wrote the run (run, plan, compare, train, "
                            "collective, scalesim or explore)");
        check_written_by_this_version(member(manifest, "fastsim_version"), (root / kRunManifest).string());
        std::set<std::string> listed;
        for (const JsonValue& f : files->items()) {
            const JsonValue* name = member(f, "name");
            const std::optional<double> bytes = number_at(f, "bytes");
            const JsonValue* digest = member(f, "fnv1a");
            if (!name || !name->is_string() || !bytes || !digest || !digest->is_string())
                throw UserError((root / kRunManifest).string() + ": files: expected name, bytes and fnv1a of each");
            if (!listed.insert(name->as_string()).second)
                throw UserError((root / kRunManifest).string() + ": files: '" + printable(name->as_string()) +
                                "' is listed twice");
            const fs::path path = root / name->as_string();
            if (!present(path))
                throw UserError(incomplete + name->as_string() + ", which its manifest lists, is missing");
            std::uintmax_t size = 0;
            if (file_digest(path, size) != digest->as_string() || static_cast<double>(size) != *bytes)
                throw UserError(incomplete + name->as_string() +
                                " is not the file its run wrote (manifest.json); run it again, or delete the folder");
        }
        // Each command's own file: a manifest naming another command is not this folder's.
        static const std::array<std::pair<const char*, const char*>, 6> kWrites{{{"run", "report.json"},
                                                                                 {"explore", "report.json"},
                                                                                 {"plan", "plan.json"},
                                                                                 {"compare", "compare.csv"},
                                                                                 {"train", "comparison.csv"},
                                                                                 {"collective", "collective.csv"}}};
        for (const auto& [writer, file] : kWrites)
            if (command->as_string() == writer && !listed.count(file))
                throw UserError((root / kRunManifest).string() + ": command: '" + writer + "', whose run writes " +
                                file + ", but the manifest lists no " + file);
        // A run's file that the manifest does not list came from elsewhere (report.html is
        // `fastsim report`'s, made later).
        for (const auto& names : {std::vector<const char*>(kRunEvidence.begin(), kRunEvidence.end()),
                                  std::vector<const char*>(kRunFiles.begin(), kRunFiles.end())})
            for (const char* name : names)
                if (std::string(name) != "report.html" && present(root / name) && !listed.count(name))
                    throw UserError(incomplete + name + " is not one of its run's files (manifest.json does not " +
                                    "list it); run it again, or delete the folder");
    }
}

}  // namespace fastsim::sweep
