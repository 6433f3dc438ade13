// SPDX-License-Identifier: MIT
// sweep::WorkerPool (`fastsim explore --jobs`): tasks run in forked workers, results in task
// order, a worker's death is its task's result and does not stop the others.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <set>
#include <string>
#include <vector>

#include "sweep/worker_pool.h"

using namespace fastsim;

TEST_CASE("A worker pool returns every task's result in task order, from several workers", "[sweep][workers]") {
    sweep::WorkerPool pool(
        3, [](std::size_t task) { return std::to_string(task * task) + "@" + std::to_string(::getpid()); },
        [](std::size_t, int) { return std::string("died"); });
    REQUIRE(pool.workers() == 3);
    std::vector<std::size_t> tasks;
    for (std::size_t t = 0; t < 200; ++t) tasks.push_back((t * 37) % 211);
    const std::vector<std::string> results = pool.run(tasks);
    REQUIRE(results.size() == tasks.size());
    std::set<std::string> pids;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        const std::size_t at = results[i].find('@');
        REQUIRE(at != std::string::npos);
        CHECK(results[i].substr(0, at) == std::to_string(tasks[i] * tasks[i]));
        pids.insert(results[i].substr(at + 1));
    }
    CHECK(pids.count(std::to_string(::getpid())) == 0);  // none ran in this process
    CHECK(pids.size() >= 2);
    CHECK(pool.run({}).empty());
    const std::vector<std::string> again = pool.run({5});  // the pool runs batch after batch
    REQUIRE(again.size() == 1);
    CHECK(again.front().rfind("25@", 0) == 0);
}

TEST_CASE("A worker that dies on a task gives its death as that task's result, and is replaced", "[sweep][workers]") {
    sweep::WorkerPool pool(
        2,
        [](std::size_t task) -> std::string {
            if (task == 13) ::raise(SIGKILL);
            if (task == 17) throw std::runtime_error("escaped");
            return std::to_string(task);
        },
        [](std::size_t task, int status) {
            return "task " + std::to_string(task) +
                   (WIFSIGNALED(status) ? " killed by " + std::to_string(WTERMSIG(status))
                                        : " exit " + std::to_string(WEXITSTATUS(status)));
        });
    std::vector<std::size_t> tasks;
    for (std::size_t t = 0; t < 30; ++t) tasks.push_back(t);
    const std::vector<std::string> results = pool.run(tasks);
    for (std::size_t t = 0; t < 30; ++t) {
        if (t == 13)
            CHECK(results[t] == "task 13 killed by " + std::to_string(SIGKILL));
        else if (t == 17)
            CHECK(results[t] == "task 17 exit 70");
        else
            CHECK(results[t] == std::to_string(t));
    }
    CHECK(pool.workers() == 2);
    CHECK(pool.run({13, 4}) == std::vector<std::string>{"task 13 killed by " + std::to_string(SIGKILL), "4"});
}
