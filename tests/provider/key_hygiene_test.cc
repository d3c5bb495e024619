// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Key hygiene: once a context has a new key or is freed, no heap memory
// holds the old key any more, expanded or not. Every allocation of the
// process is tracked (tests/support/alloc_hooks.h): aesmux's own through
// operator new, OpenSSL's (the default provider behind the fallback path)
// through CRYPTO_set_mem_functions. Each freed block is searched for the
// key's bytes, its first and last round keys (of either half, for XTS) and,
// for GCM, the powers of H the kernels keep (H'^1..H'^32); after a re-key
// and after the free every live block is searched too.
//
// Every kernel configuration runs (each tier, the fallback path, and both
// mixed in one stream): requests large and small, both directions (so the
// decryption schedules exist), a dupctx, then a re-key after which only
// requests that leave the other path idle run (a path keeps its old key
// until it is used again unless re-keying wipes it), then the free.
// The keys live in static storage, never on the heap, so that only the
// provider's copies can be found.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <random>

#include "provider/core/algorithm.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/alloc_hooks.h"
#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

using core::Family;

// EVP_CIPHER_CTX_dup() is OpenSSL 3.1's.
EVP_CIPHER_CTX *CopyOf(const EVP_CIPHER_CTX *ctx) {
  EVP_CIPHER_CTX *copy = EVP_CIPHER_CTX_new();
  if (copy != nullptr && !EVP_CIPHER_CTX_copy(copy, ctx)) {
    EVP_CIPHER_CTX_free(copy);
    return nullptr;
  }
  return copy;
}

// ------------------------------------------------- reference key material

// FIPS-197's S-box, generated (multiplicative inverse, affine map).
std::array<uint8_t, 256> MakeSbox() {
  std::array<uint8_t, 256> sbox{};
  auto rotl = [](uint8_t x, int n) {
    return static_cast<uint8_t>((x << n) | (x >> (8 - n)));
  };
  uint8_t p = 1, q = 1;
  do {
    p = static_cast<uint8_t>(p ^ (p << 1) ^ ((p & 0x80) ? 0x1b : 0));
    q = static_cast<uint8_t>(q ^ (q << 1));
    q = static_cast<uint8_t>(q ^ (q << 2));
    q = static_cast<uint8_t>(q ^ (q << 4));
    if (q & 0x80) q ^= 0x09;
    sbox[p] = static_cast<uint8_t>(q ^ rotl(q, 1) ^ rotl(q, 2) ^ rotl(q, 3) ^
                                   rotl(q, 4) ^ 0x63);
  } while (p != 1);
  sbox[0] = 0x63;
  return sbox;
}

// FIPS-197 5.2: the last round key of `key` (16, 24 or 32 bytes).
std::array<uint8_t, 16> LastRoundKey(const uint8_t *key, size_t key_len) {
  static const std::array<uint8_t, 256> sbox = MakeSbox();
  const size_t nk = key_len / 4, rounds = nk + 6;
  uint8_t w[60][4];
  std::memcpy(w, key, key_len);
  uint8_t rcon = 1;
  for (size_t i = nk; i < 4 * (rounds + 1); ++i) {
    uint8_t t[4];
    std::memcpy(t, w[i - 1], 4);
    if (i % nk == 0) {
      const uint8_t first = t[0];
      t[0] = static_cast<uint8_t>(sbox[t[1]] ^ rcon);
      t[1] = sbox[t[2]];
      t[2] = sbox[t[3]];
      t[3] = sbox[first];
      rcon = static_cast<uint8_t>((rcon << 1) ^ ((rcon & 0x80) ? 0x1b : 0));
    } else if (nk > 6 && i % nk == 4) {
      for (uint8_t &b : t) b = sbox[b];
    }
    for (int j = 0; j < 4; ++j) w[i][j] = w[i - nk][j] ^ t[j];
  }
  std::array<uint8_t, 16> last;
  std::memcpy(last.data(), w[4 * rounds], 16);
  return last;
}

using Block = std::array<uint8_t, 16>;

// SP 800-38D 6.3: the product of two blocks in GCM's field.
Block GfMultiply(const Block &x, const Block &y) {
  Block z{}, v = y;
  for (int i = 0; i < 128; ++i) {
    if ((x[i / 8] >> (7 - i % 8)) & 1) {
      for (int j = 0; j < 16; ++j) z[j] ^= v[j];
    }
    const bool lsb = v[15] & 1;
    for (int j = 15; j > 0; --j) {
      v[j] = static_cast<uint8_t>((v[j] >> 1) | (v[j - 1] << 7));
    }
    v[0] >>= 1;
    if (lsb) v[0] ^= 0xe1;
  }
  return z;
}

// How the kernels store a power P of H (kernels/include/ghash.inc): the
// block byte-reversed, as a 128-bit integer, times x modulo the reversed
// polynomial, stored little-endian.
Block KernelForm(const Block &power) {
  uint64_t high = 0, low = 0;
  for (int i = 0; i < 8; ++i) {
    high = high << 8 | power[i];
    low = low << 8 | power[8 + i];
  }
  const bool carry = high >> 63;
  high = high << 1 | low >> 63;
  low <<= 1;
  if (carry) {
    high ^= 0xc200000000000000ULL;
    low ^= 1;
  }
  Block out;
  std::memcpy(out.data(), &low, 8);
  std::memcpy(out.data() + 8, &high, 8);
  return out;
}

// ------------------------------------------------------------ the patterns

struct Pattern {
  uint8_t bytes[64];
  size_t len;
  char name[48];
  std::span<const uint8_t> span() const { return {bytes, len}; }
};

// The patterns of one key, kept off the heap.
struct KeyPatterns {
  std::array<Pattern, 80> items;
  size_t count = 0;

  void Add(const uint8_t *bytes, size_t len, const char *name) {
    Pattern &p = items.at(count++);
    std::memcpy(p.bytes, bytes, len);
    p.len = len;
    std::snprintf(p.name, sizeof(p.name), "%s", name);
  }
  std::span<const Pattern> all() const { return {items.data(), count}; }
};

constexpr size_t kMaxPowers = 32;  // the vaes_avx512 tier's

// The raw key and each AES key's first and last round key (the first is
// the raw key's first 16 bytes; a decryption schedule holds both ends
// too); for GCM, H'^1..H'^32 computed with the default provider's E(K, 0),
// each followed by its Karatsuba operand (the XOR of its halves, in both
// halves), which tiers keep beside it.
void MakePatterns(const ProviderEnv &env, const core::AlgInfo &alg,
                  const uint8_t *key, KeyPatterns *patterns) {
  patterns->Add(key, alg.key_len, "the raw key");
  const size_t halves = alg.family == Family::kXts ? 2 : 1;
  const size_t aes_len = alg.key_len / halves;
  for (size_t h = 0; h < halves; ++h) {
    const uint8_t *aes_key = key + h * aes_len;
    patterns->Add(aes_key, 16, h == 0 ? "round key 0" : "tweak round key 0");
    const auto last = LastRoundKey(aes_key, aes_len);
    patterns->Add(last.data(), 16, h == 0 ? "the last round key"
                                          : "the tweak key's last round key");
  }
  if (alg.family != Family::kGcm) return;
  const std::string ecb = "AES-" + std::to_string(alg.key_len * 8) + "-ECB";
  CipherPtr cipher = env.Default(ecb);
  auto ctx = NewCipherCtx();
  Block h{}, zero{};
  int len = 0;
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key, nullptr,
                                  nullptr));
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), h.data(), &len, zero.data(), 16));
  Block power = h;
  for (size_t k = 1; k <= kMaxPowers; ++k) {
    const Block stored = KernelForm(power);
    char name[48];
    std::snprintf(name, sizeof(name), "H'^%zu", k);
    patterns->Add(stored.data(), 16, name);
    Block karatsuba;
    for (int i = 0; i < 8; ++i) {
      karatsuba[i] = karatsuba[8 + i] =
          static_cast<uint8_t>(stored[i] ^ stored[8 + i]);
    }
    std::snprintf(name, sizeof(name), "H'^%zu's Karatsuba operand", k);
    patterns->Add(karatsuba.data(), 16, name);
    power = GfMultiply(power, h);
  }
}

// ------------------------------------------------------------ the requests

uint8_t g_old_key[64];
uint8_t g_new_key[64];

// One request through `ctx`; GCM: a whole message (AAD, payload, tag).
// Encrypting and decrypting both run, so that both schedules exist.
void Request(EVP_CIPHER_CTX *ctx, const core::AlgInfo &alg, size_t len,
             bool encrypt) {
  Bytes in(len, 0x5a), out(len + 16);
  static const uint8_t iv[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  int out_len = 0;
  ASSERT_TRUE(EVP_CipherInit_ex2(ctx, nullptr, nullptr, iv, encrypt ? 1 : 0,
                                 nullptr));
  if (alg.family == Family::kGcm) {
    ASSERT_TRUE(EVP_CipherUpdate(ctx, nullptr, &out_len, in.data(), 16));
    if (!encrypt) {
      uint8_t tag[16] = {};
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag));
    }
  } else {
    EVP_CIPHER_CTX_set_padding(ctx, 0);
  }
  ASSERT_TRUE(EVP_CipherUpdate(ctx, out.data(), &out_len, in.data(),
                               static_cast<int>(len)));
  // A GCM decryption under a made-up tag fails at final, as it should.
  EVP_CipherFinal_ex(ctx, out.data(), &out_len);
  ERR_clear_error();
}

// Keys `ctx` (already holding a cipher) with `key` and runs requests of
// each length, both ways.
void UseKey(EVP_CIPHER_CTX *ctx, const core::AlgInfo &alg,
            const uint8_t *key, std::initializer_list<size_t> lengths) {
  ASSERT_TRUE(EVP_CipherInit_ex2(ctx, nullptr, key, nullptr, 1, nullptr));
  for (size_t len : lengths) {
    Request(ctx, alg, len, true);
    Request(ctx, alg, len, false);
  }
}

// `ignored_size`: see alloc::LiveBlocksHolding.
std::string LiveCopies(std::span<const Pattern> patterns,
                       size_t ignored_size = 0) {
  std::string found;
  for (const Pattern &p : patterns) {
    if (const size_t n = alloc::LiveBlocksHolding(p.span(), ignored_size);
        n != 0) {
      found += std::string(p.name) + " in " + std::to_string(n) +
               " live block(s)\n";
    }
  }
  return found;
}

void WatchAll(std::span<const Pattern> patterns) {
  for (const Pattern &p : patterns) alloc::Watch(p.span(), p.name);
}

class KeyHygieneTest : public KernelConfigTest {
 protected:
  void TearDown() override { alloc::ForgetWatched(); }

  bool simd() const { return GetParam().kernels != "none"; }
  // The powers of H the tier keeps: H'^1..H'^n.
  size_t Powers() const {
    return GetParam().kernels == "vaes_avx512" ? 32 : 8;
  }
};

TEST_P(KeyHygieneTest, NoOldKeyAfterReKeyNorAnyAfterFree) {
  std::mt19937_64 rng(7);
  for (const core::AlgInfo &alg : core::kAlgs) {
    SCOPED_TRACE(std::string(alg.name));
    for (size_t i = 0; i < alg.key_len; ++i) {
      g_old_key[i] = static_cast<uint8_t>(rng());
      g_new_key[i] = static_cast<uint8_t>(rng());
    }
    static KeyPatterns old_patterns, new_patterns;
    old_patterns.count = new_patterns.count = 0;
    MakePatterns(*env_, alg, g_old_key, &old_patterns);
    MakePatterns(*env_, alg, g_new_key, &new_patterns);
    CipherPtr cipher = env_->Aesmux(std::string(alg.name));
    ASSERT_NE(cipher, nullptr);

    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    ASSERT_TRUE(EVP_CipherInit_ex2(ctx, cipher.get(), nullptr, nullptr, 1,
                                   nullptr));
    // Small requests (the fallback path under routing) and large ones (the
    // kernels; for GCM more than 16 blocks, which completes the powers of
    // H the vaes_avx512 tier computes late).
    UseKey(ctx, alg, g_old_key, {32, 4096});
    // The patterns must be right: the context holds the key now (its
    // first 16 bytes, round key 0: a block-mode context keeps no raw copy
    // beside its schedule, which holds the rest of the key only while
    // turned for encryption).
    EXPECT_NE(alloc::LiveBlocksHolding(old_patterns.items[1].span()), 0u)
        << "round key 0 is nowhere in the heap";
    EXPECT_NE(alloc::LiveBlocksHolding(old_patterns.items[2].span()), 0u)
        << "the last round key is nowhere in the heap";
    if (alg.family == Family::kGcm && simd()) {
      for (size_t k : {size_t{1}, Powers()}) {
        const Pattern &power = old_patterns.items[1 + 2 * k];
        EXPECT_NE(alloc::LiveBlocksHolding(power.span()), 0u)
            << power.name << " is nowhere in the heap";
      }
      if (GetParam().kernels.starts_with("aesni")) {
        const Pattern &karatsuba = old_patterns.items[4];
        EXPECT_NE(alloc::LiveBlocksHolding(karatsuba.span()), 0u)
            << karatsuba.name << " is nowhere in the heap";
      }
    }
    alloc::ForgetWatched();
    WatchAll(old_patterns.all());

    // A copy, used and freed.
    EVP_CIPHER_CTX *dup = CopyOf(ctx);
    ASSERT_NE(dup, nullptr);
    Request(dup, alg, 4096, true);
    EVP_CIPHER_CTX_free(dup);

    // A new key, then only requests of one size: 80 bytes go to the
    // kernels under routing, and GCM's 5 blocks need no more than the
    // powers every tier computes at once (the VAES tiers complete the
    // upper half of their table on the first run of more than 8 or 16
    // blocks).
    UseKey(ctx, alg, g_new_key, {80});
    EXPECT_EQ(LiveCopies(old_patterns.all()), "")
        << "the old key survives the re-key";

    WatchAll(new_patterns.all());
    EVP_CIPHER_CTX_free(ctx);
    EXPECT_EQ(LiveCopies(new_patterns.all()), "")
        << "the key survives the free";
    EXPECT_EQ(alloc::FreedBlocksHoldingSecrets(), "");
    alloc::ForgetWatched();
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KeyHygieneTest,
                         ::testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

// Multi-buffer CBC encryption copies keys into its lanes: once the jobs
// are done and their contexts freed, no lane may hold them. The jobs'
// stacks (blocks of OpenSSL's ASYNC stack size, 32 KiB) are left out of
// the search: they are stacks, not memory aesmux keeps keys in, and hold
// whatever ran there (the dynamic linker's lazy binding saves every
// vector register on the stack, and glibc's memcpy of a key leaves it in
// one: a Debug build showed the raw key there).
constexpr size_t kAsyncStackSize = 32768;
struct JobArgs {
  EVP_CIPHER_CTX *ctx;
  uint8_t *buffer;
};

int EncryptInJob(void *arg) {
  const JobArgs *args = *static_cast<JobArgs **>(arg);
  int len = 0;
  return EVP_EncryptUpdate(args->ctx, args->buffer, &len, args->buffer, 1024);
}

TEST(KeyHygieneMb, LanesKeepNoKeyOfAFinishedJob) {
  std::unique_ptr<ProviderEnv> env =
      std::make_unique<ProviderEnv>(std::vector<std::string>{});
  ASSERT_TRUE(env->loaded()) << env->error();
  if (env->ProviderParam("tier") == "none") {
    GTEST_SKIP() << "no kernel tier on this CPU: no multi-buffer lanes";
  }
  const core::AlgInfo &alg = core::Info(core::Alg::kAes256Cbc);
  CipherPtr cipher = env->Aesmux(std::string(alg.name));
  ASSERT_TRUE(ASYNC_init_thread(4, 4));
  constexpr int kJobs = 4;
  static uint8_t keys[kJobs][32];
  static KeyPatterns patterns[kJobs];
  std::mt19937_64 rng(11);
  EVP_CIPHER_CTX *ctxs[kJobs];
  Bytes buffers[kJobs];
  JobArgs args[kJobs];
  const uint64_t batches_before = env->Stat(alg.name, "mb.batches");
  for (int j = 0; j < kJobs; ++j) {
    for (uint8_t &b : keys[j]) b = static_cast<uint8_t>(rng());
    patterns[j].count = 0;
    MakePatterns(*env, alg, keys[j], &patterns[j]);
    ctxs[j] = EVP_CIPHER_CTX_new();
    static const uint8_t iv[16] = {};
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctxs[j], cipher.get(), keys[j], iv,
                                    nullptr));
    buffers[j].assign(1024, static_cast<uint8_t>(j));
    args[j] = {ctxs[j], buffers[j].data()};
  }
  ASYNC_JOB *jobs[kJobs] = {};
  ASYNC_WAIT_CTX *waits[kJobs];
  bool done[kJobs] = {};
  for (int j = 0; j < kJobs; ++j) waits[j] = ASYNC_WAIT_CTX_new();
  for (int left = kJobs; left > 0;) {
    for (int j = 0; j < kJobs; ++j) {
      if (done[j]) continue;
      int ret = 0;
      JobArgs *arg = &args[j];
      const int status = ASYNC_start_job(&jobs[j], waits[j], &ret,
                                         EncryptInJob, &arg, sizeof(arg));
      ASSERT_NE(status, ASYNC_ERR);
      if (status == ASYNC_FINISH) {
        EXPECT_EQ(ret, 1);
        done[j] = true;
        --left;
      }
    }
  }
  for (int j = 0; j < kJobs; ++j) ASYNC_WAIT_CTX_free(waits[j]);
  EXPECT_GT(env->Stat(alg.name, "mb.batches"), batches_before)
      << "the jobs were not batched";
  for (int j = 0; j < kJobs; ++j) {
    WatchAll(patterns[j].all());
    EVP_CIPHER_CTX_free(ctxs[j]);
    EXPECT_EQ(LiveCopies(patterns[j].all(), kAsyncStackSize), "")
        << "job " << j;
  }
  EXPECT_EQ(alloc::FreedBlocksHoldingSecrets(), "");
  alloc::ForgetWatched();
  ASYNC_cleanup_thread();
}

}  // namespace
}  // namespace aesmux::test
