// SPDX-License-Identifier: MIT
// Work spread over worker processes forked from this one (`fastsim explore --jobs`): each worker
// is a copy of the caller, with everything it loaded, that runs tasks by index and sends back
// their results as bytes. Plain POSIX (fork, socketpair, poll); no threads.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace fastsim::sweep {

class WorkerPool {
public:
    /// A task's result as bytes, computed in a worker from the task's index.
    using Work = std::function<std::string(std::size_t task)>;
    /// The result of a task whose worker died before answering (`status` as waitpid gives it).
    using Died = std::function<std::string(std::size_t task, int status)>;

    /// Forks `workers` processes (at least 1) that run `work`. Fork before opening files the
    /// caller writes with buffers of its own: a worker leaves with _exit and flushes nothing.
    /// Throws std::runtime_error if a worker cannot be started.
    WorkerPool(std::size_t workers, Work work, Died died);
    /// Ends the workers (they leave when their socket closes) and waits for them.
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    /// Runs every task, at most one per worker at a time, and returns their results in the
    /// order of `tasks`. A worker that dies is replaced, and its task's result is `died`'s.
    std::vector<std::string> run(const std::vector<std::size_t>& tasks);

    [[nodiscard]] std::size_t workers() const { return m_workers.size(); }

private:
    struct Worker {
        pid_t pid = -1;
        int socket = -1;  ///< the parent's end
        bool busy = false;
        std::size_t slot = 0;  ///< the index into run()'s tasks it is running
    };
    void start(Worker& w);
    void stop(Worker& w);

    Work m_work;
    Died m_died;
    std::vector<Worker> m_workers;
};

}  // namespace fastsim::sweep
