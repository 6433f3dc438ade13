// SPDX-License-Identifier: MIT
// Folders a command is writing and would leave half-made if interrupted: while one is registered,
// SIGINT, SIGTERM and SIGHUP remove it (and what it holds) before the process ends by the
// signal as it would have (so a parent, such as a sweep runner, still sees the signal).
#pragma once

#include <string>

namespace fastsim {

/// Registers `dir` (an absolute or relative path; at most 4,095 bytes) for removal on an
/// interrupt until release() or destruction. At most 16 are registered at once; past that, or for
/// a longer path, nothing is registered (the folder is then left, as before, for the next command
/// into its parent to remove). Not thread-safe: register from the main thread.
class RemovedOnInterrupt {
public:
    explicit RemovedOnInterrupt(const std::string& dir);
    ~RemovedOnInterrupt() { release(); }
    RemovedOnInterrupt(const RemovedOnInterrupt&) = delete;
    RemovedOnInterrupt& operator=(const RemovedOnInterrupt&) = delete;

    /// Stops removing it on an interrupt (e.g. before moving its files into place).
    void release();

private:
    int m_slot = -1;
};

}  // namespace fastsim
