// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// aesmux's thread-local storage stays small enough for glibc to place it in
// static TLS when the module is dlopen()ed: glibc does so from its optional
// static TLS surplus (512 bytes unless glibc.rtld.optional_static_tls says
// otherwise, shared by every module loaded late). A module that does not
// fit reaches each thread-local through _dl_tlsdesc_dynamic, 15
// instructions more per access; the per-thread statistics take one per
// request (BENCHMARKS.md, "Instructions per record").
#include <gtest/gtest.h>
#include <link.h>

#include <cstring>
#include <string_view>

#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

// At most half the surplus, so that other modules loaded late leave room.
constexpr size_t kMaxTlsBytes = 256;

struct Found {
  bool module = false;
  size_t tls_bytes = 0;
};

int FindAesmux(dl_phdr_info *info, size_t, void *data) {
  const std::string_view name = info->dlpi_name;
  if (!name.ends_with("/aesmux.so")) return 0;
  auto *found = static_cast<Found *>(data);
  found->module = true;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &header = info->dlpi_phdr[i];
    if (header.p_type == PT_TLS) {
      // Its alignment may cost up to that much padding in the surplus.
      found->tls_bytes = header.p_memsz + header.p_align;
    }
  }
  return 1;
}

TEST(ThreadLocalTest, ModuleTlsFitsGlibcsOptionalStaticSurplus) {
  ProviderEnv env;
  ASSERT_TRUE(env.loaded()) << env.error();
  Found found;
  dl_iterate_phdr(FindAesmux, &found);
  ASSERT_TRUE(found.module) << "aesmux.so is not among the loaded objects";
  EXPECT_LE(found.tls_bytes, kMaxTlsBytes)
      << "aesmux.so's thread-local block (with its alignment) grew: keep "
         "large per-thread state on the heap, behind a thread-local pointer";
}

}  // namespace
}  // namespace aesmux::test
