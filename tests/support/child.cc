#include "tests/support/child.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace aesmux::test {
namespace {

// With AESMUX_HUNG_CHILD_STACKS set, prints every thread's stack of a hung
// child (through gdb) to stderr before it is killed: a hang that shows up
// once in many runs can then be read from the log of that run.
void PrintStacks(pid_t child) {
  if (std::getenv("AESMUX_HUNG_CHILD_STACKS") == nullptr) return;
  const std::string command = "gdb -p " + std::to_string(child) +
                              " -batch -nx -ex 'thread apply all bt' 1>&2";
  std::fprintf(stderr, "stacks of the hung child %d:\n", child);
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

int ThreadsInAChild(int wanted) {
#if defined(__SANITIZE_THREAD__)
  (void)wanted;
  return 0;
#else
  return wanted;
#endif
}

}  // namespace aesmux::test
