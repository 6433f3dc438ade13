// SPDX-License-Identifier: MIT
#include "config/keys.h"

namespace fastsim::config {

MapReader submap(MapReader& parent, const std::string& key) {
    return parent.map(key).value_or(
        MapReader(*parent.document(), YAML::Node(), parent.path().empty() ? key : parent.path() + "." + key));
}

MapReader& KeyReader::parent_of(std::string_view path, std::string& leaf) {
    const auto dot = path.rfind('.');
    if (dot == std::string_view::npos) {
        leaf = std::string(path);
        return m_section;
    }
    leaf = std::string(path.substr(dot + 1));
    const std::string_view prefix = path.substr(0, dot);
    if (auto it = m_maps.find(prefix); it != m_maps.end()) return it->second;
    std::string parent_leaf;
    MapReader& parent = parent_of(prefix, parent_leaf);
    return m_maps.emplace(std::string(prefix), submap(parent, parent_leaf)).first->second;
}

void KeyReader::note(std::string_view path, const Location& where, bool given) {
    m_keys.insert_or_assign(std::string(path), std::make_pair(where, given));
}

void KeyReader::finish() const {
    // Deepest maps first, so an unknown key is reported in the map that holds it.
    for (auto it = m_maps.rbegin(); it != m_maps.rend(); ++it) it->second.finish();
    m_section.finish();
}

Location KeyReader::where(std::string_view path) const {
    if (auto it = m_keys.find(path); it != m_keys.end()) return it->second.first;
    return m_section.location_of(std::string(path));
}

bool KeyReader::given(std::string_view path) const {
    auto it = m_keys.find(path);
    return it != m_keys.end() && it->second.second;
}

namespace {

/// Keys grouped into nested maps, each map in the order its first key was listed.
struct KeyNode {
    std::string name;
    const std::vector<std::string>* items = nullptr;  ///< a leaf's value
    bool list = false;
    const std::vector<std::vector<std::string>>* nested = nullptr;  ///< a leaf's list of lists, if it is one
    std::vector<KeyNode> children;

    KeyNode& child(const std::string& child_name) {
        for (KeyNode& c : children)
            if (c.name == child_name) return c;
        children.push_back(KeyNode{child_name, nullptr, false, nullptr, {}});
        return children.back();
    }
    [[nodiscard]] bool only_leaves() const {
        for (const KeyNode& c : children)
            if (!c.items) return false;
        return true;
    }
};

void emit_node(YAML::Emitter& out, const KeyNode& node) {
    for (const KeyNode& c : node.children) {
        out << YAML::Key << c.name << YAML::Value;
        if (c.nested && !c.nested->empty()) {
            out << YAML::BeginSeq;
            for (const auto& inner : *c.nested) {
                out << YAML::Flow << YAML::BeginSeq;
                for (const std::string& item : inner) out << item;
                out << YAML::EndSeq;
            }
            out << YAML::EndSeq;
        } else if (c.items && c.list) {
            out << YAML::Flow << YAML::BeginSeq;
            for (const std::string& item : *c.items) out << item;
            out << YAML::EndSeq;
        } else if (c.items) {
            out << c.items->front();
        } else {
            if (c.only_leaves()) out << YAML::Flow;
            out << YAML::BeginMap;
            emit_node(out, c);
            out << YAML::EndMap;
        }
    }
}

}  // namespace

void KeyWriter::emit(YAML::Emitter& out) const {
    KeyNode root;
    for (const auto& [path, value] : m_values) {
        KeyNode* node = &root;
        std::size_t from = 0;
        for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', from)) {
            node = &node->child(path.substr(from, dot - from));
            from = dot + 1;
        }
        KeyNode& leaf = node->child(path.substr(from));
        leaf.items = &value.items;
        leaf.list = value.list;
        leaf.nested = &value.nested;
    }
    emit_node(out, root);
}

void KeyTable::row(const KeyDoc& key, std::string type, std::string default_value, std::string allowed) {
    const std::string unit = key.range && !key.range->unit.empty() ? std::string(key.range->unit) : "—";
    m_rows.push_back("| `" + std::string(key.path) + "` | " + type + " | " +
                     (key.default_text.empty() ? default_value : std::string(key.default_text)) + " | " +
                     (key.allowed_text.empty() ? allowed : std::string(key.allowed_text)) + " | " + unit + " | " +
                     std::string(key.meaning) + " |\n");
}

CountOrNameLists read_count_or_name_lists(const MapReader& map, const YAML::Node& node, const std::string& path,
                                          const KeyDoc& key) {
    const Document& doc = *map.document();
    CountOrNameLists out;
    if (node.IsScalar()) {
        const std::string text = node.Scalar();
        std::size_t used = 0;
        unsigned long long value = 0;
        try {
            value = std::stoull(text, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != text.size() || text.empty() || text[0] == '-')
            throw ConfigError(doc.locate(node, path),
                              "expected a count or a list of lists of layer names, got '" + text + "'");
        if (key.range) check_in_range(static_cast<std::uint64_t>(value), *key.range, doc.locate(node, path));
        out.count = value;
        return out;
    }
    if (!node.IsSequence() || node.size() == 0)
        throw ConfigError(doc.locate(node, path), "expected a count or a non-empty list of lists of layer names");
    for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string item_path = path + "[" + std::to_string(i) + "]";
        const YAML::Node inner = node[i];
        if (!inner.IsSequence() || inner.size() == 0)
            throw ConfigError(doc.locate(inner, item_path),
                              "expected a non-empty list of layer names (one stage's layers)");
        std::vector<std::string> names;
        for (std::size_t j = 0; j < inner.size(); ++j) {
            if (!inner[j].IsScalar())
                throw ConfigError(doc.locate(inner[j], item_path + "[" + std::to_string(j) + "]"),
                                  "expected a layer name");
            names.push_back(inner[j].Scalar());
        }
        out.lists.push_back(std::move(names));
    }
    return out;
}

std::string KeyTable::markdown() const {
    std::string out = "| key | type | default | allowed | unit | meaning |\n|---|---|---|---|---|---|\n";
    for (const std::string& r : m_rows) out += r;
    return out;
}

}  // namespace fastsim::config
