// SPDX-License-Identifier: MIT
#include "common/errors.h"

namespace fastsim {

std::string Location::describe() const {
    std::string out = file;
    if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
    if (!key_path.empty()) out += (out.empty() ? "" : ": ") + key_path;
    return out;
}

}  // namespace fastsim
