// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/support/child.h"

#include <dirent.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

namespace aesmux::test {
namespace {

// With AESMUX_TEST_HUNG_CHILD_STACKS set, the stacks of every thread of a hung
// child are printed to stderr before it is killed, so that a hang that
// shows up once in many runs can be read from the log of that run: by gdb
// where it is installed, else by the child itself (a VM's initramfs has no
// gdb): SIGQUIT makes it print each thread's backtrace, as addresses in
// their modules (addr2line turns them into lines).

const char *StacksSetting() {
  return std::getenv("AESMUX_TEST_HUNG_CHILD_STACKS");
}

bool WantStacks() { return StacksSetting() != nullptr; }

// AESMUX_TEST_HUNG_CHILD_STACKS=self: the child's own printing even where gdb
// is installed (under qemu-aarch64, gdb would show the emulator's stacks).
bool HaveGdb() {
  return std::string_view(StacksSetting()) != "self" &&
         access("/usr/bin/gdb", X_OK) == 0;
}

std::atomic<int> g_threads_printed{0};

int StackSignal() { return SIGRTMIN + 3; }

void PrintThisThreadsStack(int) {
  void *frames[64];
  const int count = backtrace(frames, 64);
  char header[64];
  const int len = std::snprintf(header, sizeof header, "thread %ld:\n",
                                static_cast<long>(syscall(SYS_gettid)));
  if (len > 0) (void)!write(STDERR_FILENO, header, len);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  g_threads_printed.fetch_add(1);
}

// SIGQUIT's handler: each thread of the process in turn (the others through
// a signal of their own), without allocating (the hang may be in malloc).
void PrintEveryThreadsStack(int) {
  const int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY);
  if (dir < 0) return;
  const long self = syscall(SYS_gettid);
  alignas(8) char buffer[4096];
  long got;
  while ((got = syscall(SYS_getdents64, dir, buffer, sizeof buffer)) > 0) {
    for (long at = 0; at < got;) {
      const auto *entry = reinterpret_cast<const dirent64 *>(buffer + at);
      at += entry->d_reclen;
      const long tid = std::strtol(entry->d_name, nullptr, 10);
      if (tid <= 0) continue;
      if (tid == self) {
        PrintThisThreadsStack(0);
        continue;
      }
      const int before = g_threads_printed.load();
      if (syscall(SYS_tgkill, getpid(), tid, StackSignal()) != 0) continue;
      for (int waited = 0; waited < 1000 && g_threads_printed.load() == before;
           ++waited) {
        usleep(1000);
      }
    }
  }
  close(dir);
}

// In a child: installs the handlers (backtrace loads libgcc's unwinder on
// its first call, which must not happen in a handler).
void PrepareToPrintStacks() {
  if (!WantStacks() || HaveGdb()) return;
  void *frame[1];
  backtrace(frame, 1);
  signal(StackSignal(), PrintThisThreadsStack);
  signal(SIGQUIT, PrintEveryThreadsStack);
}

void PrintStacks(pid_t child) {
  if (!WantStacks()) return;
  std::fprintf(stderr, "stacks of the hung child %d:\n", child);
  std::fflush(stderr);
  if (!HaveGdb()) {
    kill(child, SIGQUIT);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return;
  }
  const std::string command = "gdb -p " + std::to_string(child) +
                              " -batch -nx -ex 'thread apply all bt' 1>&2";
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "(gdb could not print them)\n");
  }
}

}  // namespace

std::string RunInChild(const std::function<int()> &body,
                       std::chrono::milliseconds timeout) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) return "fork failed";
  if (child == 0) {
    // A child killed after its timeout takes its own children with it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(97);
    PrepareToPrintStacks();
    int code = 99;
    try {
      code = body();
    } catch (...) {
      code = 98;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(code);
  }
  int status = 0;
  if (timeout == std::chrono::milliseconds::zero()) {
    if (waitpid(child, &status, 0) != child) return "waitpid failed";
  } else {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    pid_t ended;
    while ((ended = waitpid(child, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (ended == 0) {
      PrintStacks(child);
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return "child hung (killed after " + std::to_string(timeout.count()) +
             " ms)";
    }
    if (ended != child) return "waitpid failed";
  }
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status) == 0
               ? ""
               : "child exited with " + std::to_string(WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return "child killed by signal " + std::to_string(WTERMSIG(status)) +
           (WTERMSIG(status) == SIGSYS ? " (SIGSYS: a denied syscall)" : "");
  }
  return "child ended oddly";
}

void ForkParking::Pause() {
  if (!park_.load()) return;
  ++parked_;
  while (park_.load()) std::this_thread::yield();
  --parked_;
}

std::string ForkParking::Fork(const std::function<int()> &body,
                              std::chrono::milliseconds timeout) {
  if constexpr (kForkWhileAllocatingHangs) {
    park_ = true;
    while (parked_.load() + left_.load() < workers_) std::this_thread::yield();
  }
  std::string result = RunInChild(body, timeout);
  park_ = false;
  return result;
}

int ThreadsInAChild(int wanted) {
#if defined(__SANITIZE_THREAD__)
  (void)wanted;
  return 0;
#else
  return wanted;
#endif
}

uint64_t AddressSpaceBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmSize:")) {
      return std::stoull(line.substr(7)) * 1024;
    }
  }
  return 0;
}

}  // namespace aesmux::test
