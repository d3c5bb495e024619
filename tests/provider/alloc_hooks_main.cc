// main() of the suites that watch every allocation (tests/support/
// alloc_hooks.h): OpenSSL's allocator must be replaced before OpenSSL
// allocates anything, so before GoogleTest runs a single test.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/alloc_hooks.h"

int main(int argc, char **argv) {
  if (!aesmux::test::alloc::InstallOpenSslHooks()) {
    std::fprintf(stderr,
                 "OpenSSL allocated before main(): its allocator cannot be "
                 "replaced\n");
    return 1;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
