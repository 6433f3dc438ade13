// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace fastsim::test {

/// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
public:
    TempDir() {
        std::random_device rd;
        m_path =
            std::filesystem::temp_directory_path() / ("fastsim-test-" + std::to_string(rd()) + std::to_string(rd()));
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    /// Writes `text` to `name` inside the directory and returns the full path.
    std::string write(const std::string& name, const std::string& text) const {
        const auto p = m_path / name;
        std::ofstream(p) << text;
        return p.string();
    }
    [[nodiscard]] std::string path(const std::string& name) const { return (m_path / name).string(); }

private:
    std::filesystem::path m_path;
};

}  // namespace fastsim::test
