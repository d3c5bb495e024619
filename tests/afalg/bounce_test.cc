// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The bounce buffers the kernel writes AF_ALG output into
// (provider/afalg/bounce.h): each mapped once, when first asked for; not
// in a forked child, which neither sees nor unmaps the parent's (its own
// memory at their addresses survives) and maps its own; a mapping that
// fails (no address space left, or an injected fault) holds nothing and
// aborts nothing. Runs anywhere.
#include "provider/afalg/bounce.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "provider/afalg/fault.h"
#include "tests/support/child.h"

namespace aesmux::test {
namespace {

using afalg::BounceBuffers;

// Whether any page of [address, address + len) is mapped in this process.
bool Mapped(const void *address, size_t len) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((len + page - 1) / page);
  // mincore fails with ENOMEM where part of the range is not mapped: ask
  // page by page.
  for (size_t offset = 0; offset < len; offset += page) {
    if (mincore(const_cast<uint8_t *>(static_cast<const uint8_t *>(address)) +
                    offset,
                page, pages.data()) == 0) {
      return true;
    }
  }
  return false;
}

bool All(const uint8_t *bytes, size_t len, uint8_t value) {
  for (size_t i = 0; i < len; ++i) {
    if (bytes[i] != value) return false;
  }
  return true;
}

// Why fork() here keeps a MADV_DONTFORK mapping in the child, or empty if
// it leaves it out (qemu's user emulation takes the advice and ignores it).
std::string DontForkIgnoredReason() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void *probe = mmap(nullptr, page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe == MAP_FAILED) return "mmap failed";
  std::string reason;
  if (madvise(probe, page, MADV_DONTFORK) != 0) {
    reason = std::string("madvise(MADV_DONTFORK): ") + std::strerror(errno);
  } else if (!RunInChild([&] { return Mapped(probe, page) ? 1 : 0; }).empty()) {
    reason = "a forked child keeps a MADV_DONTFORK mapping here";
  }
  munmap(probe, page);
  return reason;
}

// Why RLIMIT_AS does not bound mmap here, or empty if it does (qemu's user
// emulation leaves the limit to the host process and ignores it).
std::string AddressSpaceLimitIgnoredReason() {
  if (kShadowMemory) return "sanitizers need an unlimited address space";
  const std::string result = RunInChild([] {
    constexpr size_t kLarge = 64 << 20;
    const rlimit tight{AddressSpaceBytes() + kLarge / 4, RLIM_INFINITY};
    if (setrlimit(RLIMIT_AS, &tight) != 0) return 1;
    void *large = mmap(nullptr, kLarge, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return large == MAP_FAILED ? 0 : 2;
  });
  return result.empty() ? "" : "RLIMIT_AS does not bound mmap here";
}

TEST(BounceBuffers, EachIsMappedOnceWhenFirstAskedFor) {
  BounceBuffers buffers;
  EXPECT_EQ(buffers.mapped(), 0u);
  int error = 0;
  uint8_t *first = buffers.Get(0, &error);
  ASSERT_NE(first, nullptr) << error;
  std::memset(first, 0xab, BounceBuffers::kBytes);
  EXPECT_EQ(buffers.Get(0, &error), first);
  EXPECT_EQ(buffers.mapped(), 1u);
  uint8_t *last = buffers.Get(BounceBuffers::kCount - 1, &error);
  ASSERT_NE(last, nullptr) << error;
  EXPECT_NE(last, first);
  std::memset(last, 0xcd, BounceBuffers::kBytes);
  EXPECT_TRUE(All(first, BounceBuffers::kBytes, 0xab));
  EXPECT_EQ(buffers.mapped(), 2u);
}

TEST(BounceBuffers, TheyAreGoneWithTheirOwner) {
  auto buffers = std::make_unique<BounceBuffers>();
  int error = 0;
  uint8_t *buffer = buffers->Get(3, &error);
  ASSERT_NE(buffer, nullptr) << error;
  buffers.reset();
  EXPECT_FALSE(Mapped(buffer, BounceBuffers::kBytes));
}

TEST(BounceBuffers, AForkedChildHasNoneOfItsParents) {
  if (const std::string why = DontForkIgnoredReason(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  auto buffers = std::make_unique<BounceBuffers>();
  int error = 0;
  uint8_t *parents = buffers->Get(0, &error);
  ASSERT_NE(parents, nullptr) << error;
  std::memset(parents, 0x5a, BounceBuffers::kBytes);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const std::string result = RunInChild([&] {
    if (Mapped(parents, BounceBuffers::kBytes)) return 2;  // MADV_DONTFORK
    if (buffers->mapped() != 0) return 3;
    // The child's own memory where the parent's buffer was.
    void *own = mmap(parents, page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (own != parents) return 4;
    std::memset(own, 0x77, page);
    int child_error = 0;
    uint8_t *childs = buffers->Get(0, &child_error);
    if (childs == nullptr || childs == parents) return 5;
    std::memset(childs, 0x11, BounceBuffers::kBytes);
    if (buffers->mapped() != 1) return 6;
    buffers.reset();  // unmaps the child's buffer, and only that
    if (Mapped(childs, BounceBuffers::kBytes)) return 7;
    if (!Mapped(own, page)) return 8;
    return All(static_cast<uint8_t *>(own), page, 0x77) ? 0 : 9;
  });
  EXPECT_EQ(result, "");
  // The parent's buffer is untouched, and still its own.
  EXPECT_TRUE(All(parents, BounceBuffers::kBytes, 0x5a));
  EXPECT_EQ(buffers->Get(0, &error), parents);
  EXPECT_EQ(buffers->mapped(), 1u);
  // A grandchild after a child that touched nothing: none either.
  EXPECT_EQ(RunInChild([&] { return buffers->mapped() == 0 ? 0 : 2; }), "");
}

TEST(BounceBuffers, AFailedMappingHoldsNothing) {
  BounceBuffers buffers;
  afalg::InjectFault(afalg::Fault::kBounceMap, 1, -ENOMEM);
  int error = 0;
  EXPECT_EQ(buffers.Get(0, &error), nullptr);
  EXPECT_EQ(error, -ENOMEM);
  EXPECT_EQ(buffers.mapped(), 0u);
  afalg::ClearFaults();
  EXPECT_NE(buffers.Get(0, &error), nullptr) << error;
  EXPECT_EQ(buffers.mapped(), 1u);
}

TEST(BounceBuffers, NoAddressSpaceLeftIsAnError) {
  if (const std::string why = AddressSpaceLimitIgnoredReason(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string result = RunInChild([] {
    BounceBuffers buffers;
    const rlimit tight{AddressSpaceBytes() + BounceBuffers::kBytes / 2,
                       RLIM_INFINITY};
    if (setrlimit(RLIMIT_AS, &tight) != 0) return 2;
    int error = 0;
    if (buffers.Get(0, &error) != nullptr) return 3;
    if (error != -ENOMEM || buffers.mapped() != 0) return 4;
    const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    if (setrlimit(RLIMIT_AS, &unlimited) != 0) return 5;
    return buffers.Get(0, &error) != nullptr ? 0 : 6;
  });
  EXPECT_EQ(result, "");
}

}  // namespace
}  // namespace aesmux::test
