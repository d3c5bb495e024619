// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// main() of the suites that watch every allocation (tests/support/
// alloc_hooks.h): OpenSSL's allocator must be replaced before OpenSSL
// allocates anything, so before GoogleTest runs a single test.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "tests/support/alloc_hooks.h"

#if defined(__SANITIZE_ADDRESS__)
// The allocations these suites fail make aesmux throw std::bad_alloc (and
// catch it) inside OpenSSL's ASYNC jobs. Their stacks are OpenSSL's
// fibres, which it switches with longjmp without telling ASan, so the
// throw's __asan_handle_no_return cannot clean the fibre's stale shadow
// ("ASan is ignoring requested __asan_handle_no_return", google/sanitizers
// issue 189), and the sigaltstack call it makes then reports its own
// local variable. That report is ASan's, never aesmux's: drop it.
extern "C" __attribute__((visibility("default"))) const char *
__asan_default_suppressions() {
  return "interceptor_name:sigaltstack\n";
}
#endif

int main(int argc, char **argv) {
  // The module whose operator new is this binary's (CMakeLists.txt): one
  // with its own C++ runtime would allocate behind the hooks' back, so
  // this replaces whatever AESMUX_TEST_MODULE said.
  setenv("AESMUX_TEST_MODULE", AESMUX_ALLOC_HOOKS_MODULE_PATH, 1);
  if (!aesmux::test::alloc::InstallOpenSslHooks()) {
    std::fprintf(stderr,
                 "OpenSSL allocated before main(): its allocator cannot be "
                 "replaced\n");
    return 1;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
