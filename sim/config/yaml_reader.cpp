// SPDX-License-Identifier: MIT
#include "config/yaml_reader.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "common/input_file.h"

namespace fastsim::config {
namespace {

std::vector<std::string> split_path(const std::string& path) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(path);
    while (std::getline(in, part, '.')) parts.push_back(part);
    if (!path.empty() && path.back() == '.') parts.emplace_back();  // "a.b." ends in an empty segment
    return parts;
}

/// Walks a loaded document and refuses what yaml-cpp accepts without a word: a key given twice
/// in one map (yaml-cpp keeps both and finds the first), a key that is not a plain scalar, and a
/// document that aliases (`*name`) expand to more nodes than its text could hold.
class StrictYamlWalk {
public:
    StrictYamlWalk(std::string file, std::size_t text_size) : m_file(std::move(file)), m_budget(2 * text_size + 64) {}

    void walk(const YAML::Node& node, const std::string& path) {
        // Without aliases every node takes at least half a character of text.
        if (m_budget-- == 0)
            fail(node.Mark(), path,
                 "the document expands to more nodes than it has characters: aliases (*name) "
                 "that repeat large parts are not supported; write the values out");
        check_untagged(node, path);
        if (node.IsMap()) {
            std::map<std::string, int> keys;  // key -> 1-based line
            for (const auto& entry : node) {
                if (!entry.first.IsScalar())
                    fail(entry.first.Mark(), path,
                         "expected a plain key, got a " + std::string(entry.first.IsMap() ? "map" : "list") +
                             " as a key");
                const std::string& key = entry.first.Scalar();
                const std::string child = path.empty() ? key : path + "." + key;
                check_untagged(entry.first, child);
                const auto [at, fresh] = keys.emplace(key, entry.first.Mark().line + 1);
                if (!fresh)
                    fail(entry.first.Mark(), child,
                         "the key '" + key + "' is given twice in one map (first at line " +
                             std::to_string(at->second) + "); yaml-cpp would silently keep the first");
                walk(entry.second, child);
            }
        } else if (node.IsSequence()) {
            for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], path + "[" + std::to_string(i) + "]");
        }
    }

private:
    /// An explicit tag (`!!str 4`, `!foo 4`) would be dropped: each key's type decides how its
    /// value reads. yaml-cpp gives untagged nodes "?" (plain) or "!" (quoted).
    void check_untagged(const YAML::Node& node, const std::string& path) const {
        const std::string& tag = node.Tag();
        if (!tag.empty() && tag != "?" && tag != "!")
            fail(node.Mark(), path,
                 "a YAML tag (" + tag +
                     ") is not supported: each key's type decides how its value reads; remove the tag");
    }

    [[noreturn]] void fail(const YAML::Mark& mark, const std::string& key_path, const std::string& message) const {
        throw ConfigError({m_file, mark.is_null() ? 0 : mark.line + 1, mark.is_null() ? 0 : mark.column + 1, key_path},
                          message);
    }

    std::string m_file;
    std::size_t m_budget;
};

/// The 1-based line where a second YAML document starts, or 0. Markers stand at the start of a
/// line: `---` (a document starts) and `...` (one ends); they cannot occur inside a scalar. A
/// `---` is the first document's start only if no content comes before it.
int second_document_line(const std::string& text) {
    bool started = false;  // an explicit "---" was seen
    bool content = false;  // the first document has content
    bool ended = false;    // "..." was seen
    int line_number = 0;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view line(text.data() + start, end - start);
        ++line_number;
        start = end + 1;
        const auto is_marker = [&](std::string_view marker) {
            return line.substr(0, 3) == marker &&
                   (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
        };
        if (is_marker("---")) {
            if (started || content || ended) return line_number;
            started = true;
            continue;
        }
        if (is_marker("...")) {
            ended = true;
            continue;
        }
        const std::size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string_view::npos || line[first] == '#') continue;  // blank or comment
        if (!started && !content && line[0] == '%') continue;                 // a directive
        if (ended) return line_number;
        content = true;
    }
    return 0;
}

/// A list index as written in a key path: decimal digits, at most 9 of them (no list is longer).
bool is_index(const std::string& s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::optional<std::string> number_syntax_error(const std::string& text, bool integer, bool allow_sign) {
    std::size_t i = 0;
    const auto digits = [&] {
        const std::size_t from = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
        return i - from;
    };
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
        if (!allow_sign) return std::string();
        ++i;
    }
    const std::size_t int_start = i;
    const std::size_t int_digits = digits();
    bool any_digits = int_digits > 0;
    if (int_digits > 1 && text[int_start] == '0')
        return std::string(
            integer ? "a leading zero: YAML 1.1 reads it as octal, YAML 1.2 as decimal; write the number without it"
                    : "a leading zero: write the number without it");
    if (!integer) {
        if (i < text.size() && text[i] == '.') {
            ++i;
            any_digits = digits() > 0 || any_digits;
        }
        if (any_digits && i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
            ++i;
            if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
            if (digits() == 0) return std::string("an exponent needs digits");
        }
    }
    if (!any_digits || i != text.size()) return std::string();
    return std::nullopt;
}

YAML::Node parse_strict_yaml(const std::string& text, const std::string& file) {
    if (text.size() > kMaxYamlInputBytes)
        throw ConfigError({file, 0, 0, ""}, "holds " + std::to_string(text.size()) +
                                                " bytes, more than the 16 MiB a YAML file may hold (its parsed "
                                                "tree takes about 90 bytes of memory per byte); split it, or give a "
                                                "network that large as an ONNX model (workload.model)");
    // YAML text holds no NUL (not a printable character); yaml-cpp misreads one.
    if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
        const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
        const std::size_t line_start = text.rfind('\n', nul);
        const auto column = nul - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
        throw ConfigError({file, static_cast<int>(line), static_cast<int>(column), ""},
                          "a NUL byte: YAML text holds none (is this a binary file?)");
    }
    // Document markers are found in the text: yaml-cpp 0.7's LoadAll loops forever on some
    // inputs (", " is one; found by fuzzing), and a second parse would double the cost.
    if (const int line = second_document_line(text))
        throw ConfigError({file, line, 1, ""},
                          "a second YAML document starts here; fastsim reads one document per file");
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        throw ConfigError({file, e.mark.line + 1, e.mark.column + 1, ""}, "invalid YAML: " + e.msg);
    } catch (const YAML::Exception& e) {
        throw ConfigError({file, 0, 0, ""}, std::string("invalid YAML: ") + e.what());
    }
    StrictYamlWalk(file, text.size()).walk(root, "");
    return root;
}

Document Document::load(const std::string& path, std::string_view what) {
    return parse(read_input_file(path, what), path);
}

Document Document::parse(const std::string& text, const std::string& path) {
    Document doc;
    doc.file = path;
    doc.root = parse_strict_yaml(text, path);
    if (doc.root.IsNull()) doc.root = YAML::Node(YAML::NodeType::Map);
    if (!doc.root.IsMap()) throw ConfigError(doc.locate(doc.root, ""), "expected a map of sections at the top level");
    return doc;
}

void Document::apply_override(const std::string& assignment) {
    const auto eq = assignment.find('=');
    const Location where{"-p " + assignment, 0, 0, ""};
    if (eq == std::string::npos || eq == 0)
        throw ConfigError(where, "expected key.path=value (for example bfp.group_size=32)");
    const std::string path = assignment.substr(0, eq);
    const YAML::Node value = parse_strict_yaml(assignment.substr(eq + 1), where.file);
    // Walk with handles rebound by reset(): assigning one Node to another would copy data.
    YAML::Node node;
    node.reset(root);
    std::string walked;  // the reader's spelling: maps joined by '.', list entries as [i]
    const auto parts = split_path(path);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string& key = parts[i];
        if (key.empty()) throw ConfigError(where, "empty segment in key path '" + path + "'");
        const bool last = i + 1 == parts.size();
        YAML::Node next;
        if (node.IsSequence()) {
            if (!is_index(key) || std::stoul(key) >= node.size())
                throw ConfigError(where, "'" + walked + "' is a list of " + std::to_string(node.size()) +
                                             " entries; '" + key + "' is not an index into it");
            next.reset(node[std::stoul(key)]);
            walked += "[" + key + "]";
        } else if (node.IsMap() || node.IsNull()) {
            if (!last && (!node[key] || node[key].IsNull())) node[key] = YAML::Node(YAML::NodeType::Map);
            if (last) node[key] = value;
            next.reset(node[key]);
            walked += (walked.empty() ? "" : ".") + key;
        } else {
            throw ConfigError(where, "'" + walked + "' is a single value; it has no key '" + key + "'");
        }
        if (last && node.IsSequence()) next = value;
        node.reset(next);
    }
    overridden_paths.push_back(walked);
}

Location Document::locate(const YAML::Node& node, const std::string& key_path) const {
    for (const auto& o : overridden_paths) {
        if (key_path == o || key_path.rfind(o + ".", 0) == 0 || key_path.rfind(o + "[", 0) == 0)
            return {"-p " + o, 0, 0, key_path};
    }
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) {
        // Not from the file: a map an override created on its way to its key.
        for (const auto& o : overridden_paths)
            if (o.rfind(key_path + ".", 0) == 0 || o.rfind(key_path + "[", 0) == 0) return {"-p " + o, 0, 0, key_path};
        return {file, 0, 0, key_path};
    }
    return {file, mark.line + 1, mark.column + 1, key_path};
}

MapReader::MapReader(const Document& doc, const YAML::Node& node, std::string key_path)
    : m_doc(&doc), m_node(node), m_path(std::move(key_path)) {
    if (m_node.IsNull()) m_node = YAML::Node(YAML::NodeType::Map);
    if (!m_node.IsMap())
        throw ConfigError(doc.locate(node, m_path), std::string("expected a map of keys, got a ") +
                                                        (node.IsSequence() ? "list" : "single value"));
}

Location MapReader::location_of(const std::string& key) const {
    const YAML::Node node = get(key);
    return m_doc->locate(node && !node.IsNull() ? node : m_node, child_path(key));
}

std::optional<MapReader> MapReader::map(const std::string& key) {
    m_known.insert(key);
    const YAML::Node node = get(key);
    if (!node) return std::nullopt;
    return MapReader(*m_doc, node, child_path(key));
}

std::vector<MapReader> MapReader::maps(const std::string& key) {
    m_known.insert(key);
    const YAML::Node node = get(key);
    std::vector<MapReader> out;
    if (!node || node.IsNull()) return out;
    if (!node.IsSequence()) throw ConfigError(location_of(key), "expected a list of maps");
    for (std::size_t i = 0; i < node.size(); ++i)
        out.emplace_back(*m_doc, node[i], child_path(key) + "[" + std::to_string(i) + "]");
    return out;
}

void MapReader::finish() const {
    for (const auto& entry : m_node) {
        const std::string key = entry.first.Scalar();
        if (m_known.count(key)) continue;
        std::string known;
        for (const auto& k : m_known) known += (known.empty() ? "" : ", ") + k;
        throw ConfigError(m_doc->locate(entry.first, child_path(key)), "unknown key '" + key + "'" +
                                                                           (m_path.empty() ? "" : " in " + m_path) +
                                                                           " (expected one of: " + known + ")");
    }
}

}  // namespace fastsim::config
