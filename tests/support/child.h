// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support: running part of a test in a forked child, for tests that
// change process state (seccomp filters) or test what a child inherits.
#ifndef AESMUX_TESTS_SUPPORT_CHILD_H_
#define AESMUX_TESTS_SUPPORT_CHILD_H_

#include <chrono>
#include <functional>
#include <string>

namespace aesmux::test {

// Runs `body` in a forked child, which ends with _exit(body()). Returns
// empty if it exited with 0, else how it ended (exit code, or the signal:
// SIGSYS for a seccomp kill). With a `timeout`, a child still running then
// is killed and reported as hung.
std::string RunInChild(const std::function<int()> &body,
                       std::chrono::milliseconds timeout =
                           std::chrono::milliseconds::zero());

// How many threads a forked child may start of the `wanted`: none under
// ThreadSanitizer, which cannot run threads started in the child of a
// multi-threaded process (the child's own thread still works there).
int ThreadsInAChild(int wanted);

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_CHILD_H_
