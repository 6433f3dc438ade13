// SPDX-License-Identifier: MIT
#include "common/json_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "common/errors.h"
#include "common/input_file.h"

namespace fastsim {

JsonValue JsonValue::make_bool(bool value) {
    JsonValue v;
    v.m_kind = Kind::boolean;
    v.m_bool = value;
    return v;
}

JsonValue JsonValue::make_number(double value) {
    JsonValue v;
    v.m_kind = Kind::number;
    v.m_number = value;
    return v;
}

JsonValue JsonValue::make_string(std::string value) {
    JsonValue v;
    v.m_kind = Kind::string;
    v.m_string = std::move(value);
    return v;
}

JsonValue JsonValue::make_array(std::vector<JsonValue> items) {
    JsonValue v;
    v.m_kind = Kind::array;
    v.m_items = std::move(items);
    return v;
}

JsonValue JsonValue::make_object(std::vector<JsonMember> members) {
    JsonValue v;
    v.m_kind = Kind::object;
    v.m_members = std::move(members);
    return v;
}

const std::vector<JsonMember>& JsonValue::members() const { return m_members; }

const JsonValue* JsonValue::find(std::string_view key) const {
    for (const auto& m : m_members)
        if (m.key == key) return &m.value;
    return nullptr;
}

namespace {

constexpr int kMaxDepth = 64;

/// Recursive-descent parser over the whole text; tracks line and column for messages.
class JsonParser {
public:
    JsonParser(std::string_view text, const std::string& source) : m_text(text), m_source(source) {}

    JsonValue document() {
        JsonValue v = value(0);
        skip_space();
        if (m_pos < m_text.size()) fail("unexpected text after the JSON value");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& message) const {
        int line = 1, column = 1;
        for (std::size_t i = 0; i < m_pos && i < m_text.size(); ++i) {
            if (m_text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        throw UserError(m_source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message);
    }

    void skip_space() {
        while (m_pos < m_text.size() &&
               (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' || m_text[m_pos] == '\n' || m_text[m_pos] == '\r'))
            ++m_pos;
    }

    bool consume(char c) {
        skip_space();
        if (m_pos < m_text.size() && m_text[m_pos] == c) {
            ++m_pos;
            return true;
        }
        return false;
    }

    void expect(char c, const char* what) {
        if (!consume(c)) fail(std::string("expected ") + what);
    }

    JsonValue value(int depth) {
        if (depth > kMaxDepth) fail("JSON nested too deeply");
        skip_space();
        if (m_pos >= m_text.size()) fail("expected a JSON value, got the end of the file");
        const char c = m_text[m_pos];
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        if (c == '"') return JsonValue::make_string(string());
        if (literal("true")) return JsonValue::make_bool(true);
        if (literal("false")) return JsonValue::make_bool(false);
        if (literal("null")) return JsonValue();
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        fail(std::string("expected a JSON value, got '") + c + "'");
    }

    bool literal(std::string_view word) {
        if (m_text.substr(m_pos, word.size()) != word) return false;
        m_pos += word.size();
        return true;
    }

    JsonValue object(int depth) {
        ++m_pos;  // '{'
        std::vector<JsonMember> members;
        std::unordered_set<std::string> keys;
        if (consume('}')) return JsonValue::make_object(std::move(members));
        do {
            skip_space();
            if (m_pos >= m_text.size() || m_text[m_pos] != '"') fail("expected a member name in double quotes");
            const std::size_t key_pos = m_pos;
            std::string key = string();
            if (!keys.insert(key).second) {
                m_pos = key_pos;
                fail("member '" + key + "' is given twice in one object");
            }
            expect(':', "':' after a member name");
            members.push_back({std::move(key), value(depth + 1)});
        } while (consume(','));
        expect('}', "',' or '}' in an object");
        return JsonValue::make_object(std::move(members));
    }

    JsonValue array(int depth) {
        ++m_pos;  // '['
        std::vector<JsonValue> items;
        if (consume(']')) return JsonValue::make_array(std::move(items));
        do items.push_back(value(depth + 1));
        while (consume(','));
        expect(']', "',' or ']' in an array");
        return JsonValue::make_array(std::move(items));
    }

    JsonValue number() {
        // JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, converted with strtod.
        const std::size_t start = m_pos;
        const auto digits = [&]() {
            const std::size_t from = m_pos;
            while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9') ++m_pos;
            return m_pos > from;
        };
        if (m_text[m_pos] == '-') ++m_pos;
        if (m_pos < m_text.size() && m_text[m_pos] == '0')
            ++m_pos;  // no leading zeros: "01" is 0 followed by stray text
        else if (!digits())
            fail("expected digits in a number");
        if (m_pos < m_text.size() && m_text[m_pos] == '.') {
            ++m_pos;
            if (!digits()) fail("expected digits after the decimal point");
        }
        if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
            ++m_pos;
            if (m_pos < m_text.size() && (m_text[m_pos] == '+' || m_text[m_pos] == '-')) ++m_pos;
            if (!digits()) fail("expected digits in the exponent");
        }
        const std::string token(m_text.substr(start, m_pos - start));
        const double v = std::strtod(token.c_str(), nullptr);
        if (!std::isfinite(v)) {
            m_pos = start;
            fail("number out of range: " + token);
        }
        return JsonValue::make_number(v);
    }

    /// A string literal at m_pos (on its opening quote), escapes decoded, \u as UTF-8.
    std::string string() {
        ++m_pos;  // '"'
        std::string out;
        for (;;) {
            if (m_pos >= m_text.size()) fail("unterminated string");
            const char c = m_text[m_pos++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) {
                --m_pos;
                fail("control character in a string");
            }
            if (c != '\\') {
                out += c;
                continue;
            }
            if (m_pos >= m_text.size()) fail("unterminated string");
            const char e = m_text[m_pos++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': append_utf8(out, code_point()); break;
            default: --m_pos; fail(std::string("unknown escape '\\") + e + "'");
            }
        }
    }

    unsigned hex4() {
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            if (m_pos >= m_text.size()) fail("expected 4 hex digits after \\u");
            const char h = m_text[m_pos++];
            v <<= 4;
            if (h >= '0' && h <= '9')
                v |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f')
                v |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
                v |= static_cast<unsigned>(h - 'A' + 10);
            else
                fail("expected 4 hex digits after \\u");
        }
        return v;
    }

    /// After "\u": one code point, joining a UTF-16 surrogate pair; a lone surrogate is U+FFFD.
    unsigned code_point() {
        const unsigned first = hex4();
        if (first >= 0xD800 && first <= 0xDBFF && m_text.substr(m_pos, 2) == "\\u") {
            m_pos += 2;
            const unsigned second = hex4();
            if (second >= 0xDC00 && second <= 0xDFFF) return 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            return 0xFFFD;
        }
        return first >= 0xD800 && first <= 0xDFFF ? 0xFFFD : first;
    }

    static void append_utf8(std::string& out, unsigned cp) {
        const auto byte = [](unsigned v) { return static_cast<char>(v); };
        if (cp < 0x80) {
            out += byte(cp);
        } else if (cp < 0x800) {
            out += byte(0xC0 | (cp >> 6));
            out += byte(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += byte(0xE0 | (cp >> 12));
            out += byte(0x80 | ((cp >> 6) & 0x3F));
            out += byte(0x80 | (cp & 0x3F));
        } else {
            out += byte(0xF0 | (cp >> 18));
            out += byte(0x80 | ((cp >> 12) & 0x3F));
            out += byte(0x80 | ((cp >> 6) & 0x3F));
            out += byte(0x80 | (cp & 0x3F));
        }
    }

    std::string_view m_text;
    const std::string& m_source;
    std::size_t m_pos = 0;
};

}  // namespace

JsonValue parse_json(std::string_view text, const std::string& source) { return JsonParser(text, source).document(); }

JsonValue read_json_file(const std::string& path) { return parse_json(read_input_file(path, "JSON file"), path); }

}  // namespace fastsim
