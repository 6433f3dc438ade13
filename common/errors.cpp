// SPDX-License-Identifier: MIT
#include "common/errors.h"

namespace fastsim {

namespace {

/// The length of the well-formed UTF-8 sequence starting at text[i] (2 to 4), or 0.
std::size_t utf8_sequence(const std::string& text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;  // the second byte's range (RFC 3629)
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        if (lead == 0xe0) low = 0xa0;
        if (lead == 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        if (lead == 0xf0) low = 0x90;
        if (lead == 0xf4) high = 0x8f;
    } else {
        return 0;
    }
    if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (std::size_t k = 2; k < length; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
    return length;
}

}  // namespace

std::string printable(const std::string& text) {
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto u = static_cast<unsigned char>(text[i]);
        if (u == '\n') {
            out += "\\n";  // a message is one line
        } else if (u >= 0x80) {
            // U+0080 to U+009F (C2 80 ... C2 9F) are control characters too (CSI moves the terminal).
            const bool c1 = u == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f;
            if (const std::size_t length = c1 ? 0 : utf8_sequence(text, i)) {
                out.append(text, i, length);
                i += length - 1;
            } else {
                out += "\\x";
                out += kHex[u >> 4];
                out += kHex[u & 15];
            }
        } else if ((u < 0x20 && u != '\t') || u == 0x7f) {
            out += "\\x";
            out += kHex[u >> 4];
            out += kHex[u & 15];
        } else {
            out += text[i];
        }
    }
    return out;
}

std::string Location::describe() const {
    std::string out = file;
    if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
    if (!key_path.empty()) out += (out.empty() ? "" : ": ") + key_path;
    return out;
}

}  // namespace fastsim
