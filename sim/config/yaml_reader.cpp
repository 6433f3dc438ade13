// SPDX-License-Identifier: MIT
#include "config/yaml_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace fastsim::config {
namespace {

std::vector<std::string> split_path(const std::string& path) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(path);
    while (std::getline(in, part, '.')) parts.push_back(part);
    return parts;
}

bool is_index(const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

Document Document::load(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw ConfigError({path, 0, 0, ""}, std::string("cannot open config file: ") + std::strerror(errno));
    std::stringstream text;
    text << in.rdbuf();
    return parse(text.str(), path);
}

Document Document::parse(const std::string& text, const std::string& path) {
    Document doc;
    doc.file = path;
    try {
        doc.root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        throw ConfigError({path, e.mark.line + 1, e.mark.column + 1, ""}, "invalid YAML: " + e.msg);
    }
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
    YAML::Node value;
    try {
        value = YAML::Load(assignment.substr(eq + 1));
    } catch (const YAML::ParserException& e) {
        throw ConfigError(where, "the value is not valid YAML: " + e.msg);
    }
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
        throw ConfigError(m_doc->locate(entry.first, child_path(key)),
                          "unknown key '" + key + "'" + (m_path.empty() ? "" : " in " + m_path) + " (expected one of: " + known + ")");
    }
}

}  // namespace fastsim::config
