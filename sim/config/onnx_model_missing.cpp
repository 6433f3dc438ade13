// SPDX-License-Identifier: MIT
// read_onnx_model in a build without libonnx-dev: says what to install.
#include "config/onnx_model.h"

namespace fastsim::config {

bool onnx_supported() { return false; }

workload::Workload read_onnx_model(const std::string& path) { return read_onnx_bytes("", path); }

workload::Workload read_onnx_bytes(const std::string&, const std::string& path) {
    throw UserError(path +
                    ": this fastsim was built without ONNX support: install Debian's libonnx-dev and "
                    "libprotobuf-dev (bash scripts/setup.sh does) and rebuild (cmake -S . -B build)");
}

}  // namespace fastsim::config
