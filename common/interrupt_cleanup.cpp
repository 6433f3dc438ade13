// SPDX-License-Identifier: MIT
#include "common/interrupt_cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace fastsim {
namespace {

constexpr std::size_t kSlots = 16;
constexpr std::size_t kPathBytes = 4096;
constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};

struct Slot {
    std::atomic<bool> active{false};
    char path[kPathBytes] = {};
};
std::array<Slot, kSlots> g_slots;
bool g_installed = false;

/// linux_dirent64, as getdents64 fills it.
struct DirEntry {
    ino64_t ino;
    off64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
};

/// Removes `name` under `parent` (a folder and everything in it, or a file), with system calls
/// alone: async-signal-safe. Depth is bounded by the folders a run writes (a few levels).
void remove_tree_at(int parent, const char* name, int depth) {
    if (::unlinkat(parent, name, 0) == 0 || (errno != EISDIR && errno != EPERM) || depth > 16) return;
    const int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    alignas(DirEntry) char buffer[2048];
    for (bool removed = true; removed;) {  // entries removed while listing may hide others: list again
        removed = false;
        ::lseek(fd, 0, SEEK_SET);
        for (long got; (got = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0;)
            for (long at = 0; at < got;) {
                const auto* e = reinterpret_cast<const DirEntry*>(buffer + at);
                at += e->reclen;
                if (std::strcmp(e->name, ".") == 0 || std::strcmp(e->name, "..") == 0) continue;
                remove_tree_at(fd, e->name, depth + 1);
                removed = true;
            }
    }
    ::close(fd);
    ::unlinkat(parent, name, AT_REMOVEDIR);
}

void on_interrupt(int signal) {
    const int saved = errno;
    for (Slot& s : g_slots)
        if (s.active.load()) remove_tree_at(AT_FDCWD, s.path, 0);
    errno = saved;
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    ::sigemptyset(&fallback.sa_mask);
    ::sigaction(signal, &fallback, nullptr);
    ::raise(signal);  // delivered once this handler returns: the process ends by the signal
}

void install() {
    if (g_installed) return;
    g_installed = true;
    for (const int signal : kSignals) {
        struct sigaction previous {};
        ::sigaction(signal, nullptr, &previous);
        if (previous.sa_handler == SIG_IGN) continue;  // e.g. nohup: the signal stays ignored
        struct sigaction handler {};
        handler.sa_handler = on_interrupt;
        ::sigemptyset(&handler.sa_mask);
        for (const int other : kSignals) ::sigaddset(&handler.sa_mask, other);
        ::sigaction(signal, &handler, nullptr);
    }
}

}  // namespace

RemovedOnInterrupt::RemovedOnInterrupt(const std::string& dir) {
    if (dir.empty() || dir.size() >= kPathBytes) return;
    for (std::size_t i = 0; i < kSlots; ++i) {
        Slot& s = g_slots[i];
        if (s.active.load()) continue;
        std::memcpy(s.path, dir.c_str(), dir.size() + 1);
        install();
        s.active.store(true);
        m_slot = static_cast<int>(i);
        return;
    }
}

void RemovedOnInterrupt::release() {
    if (m_slot < 0) return;
    g_slots[static_cast<std::size_t>(m_slot)].active.store(false);
    m_slot = -1;
}

}  // namespace fastsim
