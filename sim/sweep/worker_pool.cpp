// SPDX-License-Identifier: MIT
#include "sweep/worker_pool.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace fastsim::sweep {
namespace {

/// Reads exactly `size` bytes; false at end of file or on an error.
bool read_all(int fd, void* data, std::size_t size) {
    auto* at = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t got = ::read(fd, at, size);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        at += got;
        size -= static_cast<std::size_t>(got);
    }
    return true;
}

/// Writes exactly `size` bytes to a socket; false if the other end is gone (no SIGPIPE).
bool send_all(int fd, const void* data, std::size_t size) {
    const auto* at = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t sent = ::send(fd, at, size, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return false;
        at += sent;
        size -= static_cast<std::size_t>(sent);
    }
    return true;
}

/// A worker's life: a task index in, its result's length and bytes out, until the parent's end
/// closes. Leaves with _exit: the parent's buffers and exit handlers are the parent's.
[[noreturn]] void serve(int fd, const WorkerPool::Work& work) {
    for (;;) {
        std::uint64_t task = 0;
        if (!read_all(fd, &task, sizeof task)) ::_exit(0);
        std::string result;
        try {
            result = work(static_cast<std::size_t>(task));
        } catch (...) {
            ::_exit(70);  // the parent records the task as its worker's death
        }
        const std::uint64_t size = result.size();
        if (!send_all(fd, &size, sizeof size) || !send_all(fd, result.data(), result.size())) ::_exit(0);
    }
}

}  // namespace

WorkerPool::WorkerPool(std::size_t workers, Work work, Died died)
    : m_work(std::move(work)), m_died(std::move(died)), m_workers(workers < 1 ? 1 : workers) {
    for (Worker& w : m_workers) start(w);
}

WorkerPool::~WorkerPool() {
    for (Worker& w : m_workers) stop(w);
}

void WorkerPool::start(Worker& w) {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0)
        throw std::runtime_error(std::string("worker pool: socketpair: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int error = errno;
        ::close(ends[0]);
        ::close(ends[1]);
        throw std::runtime_error(std::string("worker pool: fork: ") + std::strerror(error));
    }
    if (pid == 0) {
        // The other workers' sockets stay the parent's alone: a worker holding one would keep
        // its worker from seeing the parent close it.
        for (const Worker& other : m_workers)
            if (other.socket >= 0) ::close(other.socket);
        ::close(ends[0]);
        serve(ends[1], m_work);
    }
    ::close(ends[1]);
    w.pid = pid;
    w.socket = ends[0];
    w.busy = false;
}

void WorkerPool::stop(Worker& w) {
    if (w.socket >= 0) ::close(w.socket);
    w.socket = -1;
    if (w.pid > 0) {
        if (w.busy) ::kill(w.pid, SIGKILL);  // a task nobody will read
        int status = 0;
        while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {}
    }
    w.pid = -1;
    w.busy = false;
}

std::vector<std::string> WorkerPool::run(const std::vector<std::size_t>& tasks) {
    std::vector<std::string> results(tasks.size());
    std::size_t next = 0, done = 0;
    std::vector<pollfd> polled;
    std::vector<Worker*> polled_workers;
    while (done < tasks.size()) {
        for (Worker& w : m_workers) {
            while (!w.busy && next < tasks.size()) {
                const std::uint64_t task = tasks[next];
                if (send_all(w.socket, &task, sizeof task)) {
                    w.busy = true;
                    w.slot = next++;
                } else {  // died while idle: a new one takes the task
                    stop(w);
                    start(w);
                }
            }
        }
        polled.clear();
        polled_workers.clear();
        for (Worker& w : m_workers)
            if (w.busy) {
                polled.push_back({w.socket, POLLIN, 0});
                polled_workers.push_back(&w);
            }
        if (::poll(polled.data(), polled.size(), -1) < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(std::string("worker pool: poll: ") + std::strerror(errno));
        }
        for (std::size_t i = 0; i < polled.size(); ++i) {
            if (polled[i].revents == 0) continue;
            Worker& w = *polled_workers[i];
            std::uint64_t size = 0;
            std::string result;
            bool answered = read_all(w.socket, &size, sizeof size);
            if (answered) {
                result.resize(size);
                answered = read_all(w.socket, result.data(), result.size());
            }
            const std::size_t slot = w.slot;
            if (answered) {
                results[slot] = std::move(result);
                w.busy = false;
            } else {  // the worker died on this task: its death is the task's result
                ::close(w.socket);
                w.socket = -1;
                int status = 0;
                while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {}
                w.pid = -1;
                w.busy = false;
                results[slot] = m_died(tasks[slot], status);
                start(w);
            }
            ++done;
        }
    }
    return results;
}

}  // namespace fastsim::sweep
