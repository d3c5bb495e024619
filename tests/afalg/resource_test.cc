// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Resource limits: with little address space or few file descriptors,
// aesmux keeps serving (the afalg path hands requests to the CPU), the
// application keeps its descriptors and nothing aborts. Each test runs in
// a forked child, so that its limits do not reach the other tests. Those
// of the afalg path need a kernel with it (scripts/test-afalg-vm.sh runs
// them on a real one).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <malloc.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/afalg/afalg_support.h"
#include "tests/support/child.h"

namespace aesmux::test {
namespace {

bool LimitAddressSpace(uint64_t extra) {
  const rlimit limit{AddressSpaceBytes() + extra, RLIM_INFINITY};
  return setrlimit(RLIMIT_AS, &limit) == 0;
}

// A GCM seal of `aad` then `payload` in one update each; the tag, or
// empty on failure.
Bytes GcmTag(const EVP_CIPHER *cipher, const uint8_t *aad, size_t aad_len,
             const Bytes &payload) {
  static const uint8_t key[32] = {7}, iv[12] = {9};
  auto ctx = NewCipherCtx();
  Bytes out(payload.size()), tag(16);
  int len = 0;
  if (!EVP_EncryptInit_ex2(ctx.get(), cipher, key, iv, nullptr)) return {};
  // EVP takes an int length: feed the AAD in pieces of 1 GiB at most.
  for (size_t done = 0; done < aad_len;) {
    const size_t piece = std::min<size_t>(aad_len - done, size_t{1} << 30);
    if (!EVP_EncryptUpdate(ctx.get(), nullptr, &len, aad + done,
                           static_cast<int>(piece))) {
      return {};
    }
    done += piece;
  }
  if (!EVP_EncryptUpdate(ctx.get(), out.data(), &len, payload.data(),
                         static_cast<int>(payload.size())) ||
      !EVP_EncryptFinal_ex(ctx.get(), out.data(), &len) ||
      !EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16, tag.data())) {
    return {};
  }
  return tag;
}

// GCM routing depends on the length when a threshold is set, or when the
// afalg path is on for GCM: then a message's AAD is buffered until its
// first payload, up to a bound.
const std::vector<std::vector<std::string>> kGcmRoutedSettings = {
    {"afalg = off", "gcm.fallback_max_len = 64"},
    {"afalg = force"},
};

bool NeedsAfalg(const std::vector<std::string> &settings) {
  return settings[0] == "afalg = force";
}

class GcmAadTest
    : public ::testing::TestWithParam<std::vector<std::string>> {
 protected:
  void SetUp() override {
    if (NeedsAfalg(GetParam())) SKIP_WITHOUT_AFALG();
  }
};

// 64 MiB of AAD in one update, under an address-space limit 16 MiB above
// what the process uses: buffering it whole would throw std::bad_alloc
// through a dispatch function and abort. (Sizes are kept small for the
// qemu guest, which emulates every instruction.)
TEST_P(GcmAadTest, HugeAadUnderAnAddressSpaceLimit) {
  if (kShadowMemory) {
    GTEST_SKIP() << "sanitizers need an unlimited address space";
  }
  const std::vector<std::string> settings = GetParam();
  const std::string result = RunInChild([&] {
    auto env = LoadAfalgEnv(settings);
    if (!env->loaded()) return 2;
    constexpr size_t kAadLen = size_t{64} << 20;
    // Untouched anonymous memory reads as zeros and takes no RAM.
    void *aad = mmap(nullptr, kAadLen, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (aad == MAP_FAILED) return 3;
    const Bytes payload(100, 5);
    CipherPtr ours = env->Aesmux("AES-256-GCM");
    CipherPtr theirs = env->Default("AES-256-GCM");
    const Bytes expected = GcmTag(theirs.get(), static_cast<uint8_t *>(aad),
                                  kAadLen, payload);
    if (expected.empty()) return 4;
    if (!LimitAddressSpace(16 << 20)) return 5;
    const Bytes tag =
        GcmTag(ours.get(), static_cast<uint8_t *>(aad), kAadLen, payload);
    return tag == expected ? 0 : 6;
  });
  EXPECT_EQ(result, "");
}

// The buffer goes back once the message is routed: a large AAD leaves no
// memory behind in a context that lives on.
TEST_P(GcmAadTest, AadBufferIsReleased) {
  if (kShadowMemory) GTEST_SKIP() << "malloc statistics are the sanitizer's";
  const std::vector<std::string> settings = GetParam();
  const std::string result = RunInChild([&] {
    auto env = LoadAfalgEnv(settings);
    if (!env->loaded()) return 2;
    CipherPtr cipher = env->Aesmux("AES-128-GCM");
    static const uint8_t key[16] = {1}, iv[12] = {2};
    const Bytes aad(16 << 20, 3), payload(64, 4);
    Bytes out(64);
    int len = 0;
    auto ctx = NewCipherCtx();
    auto heap = [] {
      const struct mallinfo2 info = mallinfo2();
      return info.uordblks + info.hblkhd;
    };
    auto seal = [&](size_t aad_len) {
      return EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key, iv, nullptr) &&
             EVP_EncryptUpdate(ctx.get(), nullptr, &len, aad.data(),
                               static_cast<int>(aad_len)) &&
             EVP_EncryptUpdate(ctx.get(), out.data(), &len, payload.data(),
                               64) &&
             EVP_EncryptFinal_ex(ctx.get(), out.data(), &len);
    };
    if (!seal(100)) return 3;  // whatever a first message sets up
    const size_t before = heap();
    if (!seal(aad.size())) return 4;
    const size_t after = heap();
    if (after > before + (1 << 20)) {
      std::fprintf(stderr, "the context keeps %zu bytes more after the "
                           "message\n", after - before);
      return 5;
    }
    return 0;
  });
  EXPECT_EQ(result, "");
}

std::string SettingsName(
    const testing::TestParamInfo<std::vector<std::string>> &info) {
  return NeedsAfalg(info.param) ? "afalg" : "fallback_max_len";
}

INSTANTIATE_TEST_SUITE_P(Routed, GcmAadTest,
                         ::testing::ValuesIn(kGcmRoutedSettings),
                         SettingsName);

// An in-place request is copied before it goes to the kernel (a failed
// kernel request may have written over its input): under an
// address-space limit the copy fails and the request runs on the CPU.
TEST(ResourceLimits, InPlaceRequestUnderAnAddressSpaceLimit) {
  SKIP_WITHOUT_AFALG();
  if (kShadowMemory) {
    GTEST_SKIP() << "sanitizers need an unlimited address space";
  }
  const std::string result = RunInChild([] {
    auto env = LoadAfalgEnv({"afalg = force"});
    if (!env->loaded()) return 2;
    constexpr size_t kLen = size_t{24} << 20;
    std::mt19937_64 rng(3);
    const Bytes key = RandomBytes(rng, 16), iv = RandomBytes(rng, 16);
    Bytes buffer(kLen, 0x61);
    CipherPtr ours = env->Aesmux("AES-128-CTR");
    CipherPtr theirs = env->Default("AES-128-CTR");
    const Bytes expected = EvpCrypt(theirs.get(), key, iv, buffer, true, {},
                                    false);
    if (!LimitAddressSpace(8 << 20)) return 5;
    auto ctx = NewCipherCtx();
    int len = 0;
    if (!EVP_EncryptInit_ex2(ctx.get(), ours.get(), key.data(), iv.data(),
                             nullptr) ||
        !EVP_EncryptUpdate(ctx.get(), buffer.data(), &len, buffer.data(),
                           static_cast<int>(kLen))) {
      return 6;
    }
    return buffer == expected ? 0 : 7;
  });
  EXPECT_EQ(result, "");
}

// Descriptors the process can still open.
int FreeDescriptors() {
  std::vector<int> fds;
  for (;;) {
    const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) break;
    fds.push_back(fd);
  }
  for (int fd : fds) close(fd);
  return static_cast<int>(fds.size());
}

// RLIMIT_NOFILE 64: forty live contexts, each with its own key on the
// afalg path, take at most a quarter of the descriptors (the afalg path's
// budget); the others are served on the CPU, counted as fd_budget
// hand-offs; the application can still open what is left.
void ManyKeysUnderALowDescriptorLimit(bool limit_before_load) {
  SKIP_WITHOUT_AFALG();
  const std::string result = RunInChild([&] {
    constexpr rlim_t kLimit = 64;
    const rlimit limit{kLimit, kLimit};
    if (limit_before_load && setrlimit(RLIMIT_NOFILE, &limit) != 0) return 3;
    auto env = LoadAfalgEnv({"afalg = force"});
    if (!env->loaded()) return 2;
    if (!limit_before_load && setrlimit(RLIMIT_NOFILE, &limit) != 0) return 3;
    const int free_before = FreeDescriptors();
    CipherPtr ours = env->Aesmux("AES-128-CBC");
    CipherPtr theirs = env->Default("AES-128-CBC");
    std::mt19937_64 rng(5);
    std::vector<CipherCtxPtr> contexts;
    for (int i = 0; i < 40; ++i) {
      const Bytes key = RandomBytes(rng, 16), iv = RandomBytes(rng, 16);
      const Bytes plain = RandomBytes(rng, 4096);
      auto ctx = NewCipherCtx();
      Bytes out(4096);
      int len = 0;
      if (!EVP_EncryptInit_ex2(ctx.get(), ours.get(), key.data(), iv.data(),
                               nullptr) ||
          !EVP_EncryptUpdate(ctx.get(), out.data(), &len, plain.data(),
                             4096)) {
        return 4;
      }
      if (out != EvpCrypt(theirs.get(), key, iv, plain, true, {}, false)) {
        return 5;
      }
      contexts.push_back(std::move(ctx));
    }
    const int free_after = FreeDescriptors();
    std::fprintf(stderr, "free descriptors: %d before, %d after\n",
                 free_before, free_after);
    if (free_after < free_before - static_cast<int>(kLimit / 4)) return 6;
    if (env->Stat("AES-128-CBC", "afalg-fallback:fd_budget", "requests") ==
        0) {
      return 7;
    }
    if (env->Stat("AES-128-CBC", "afalg", "requests") == 0) return 8;
    return 0;
  });
  EXPECT_EQ(result, "");
}

TEST(ResourceLimits, ManyKeysUnderALowDescriptorLimitSetBeforeLoad) {
  ManyKeysUnderALowDescriptorLimit(true);
}

TEST(ResourceLimits, ManyKeysUnderALowDescriptorLimitSetAfterLoad) {
  ManyKeysUnderALowDescriptorLimit(false);
}

}  // namespace
}  // namespace aesmux::test
