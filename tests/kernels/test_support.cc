// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/kernels/test_support.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>

namespace aesmux::kernels::testing {
namespace {

constexpr uint64_t kDefaultSeed = 0xae5d0c5eed2024ULL;

uint64_t BaseSeed() {
  if (const char *env = std::getenv("AESMUX_TEST_SEED")) {
    return std::strtoull(env, nullptr, 0);
  }
  return kDefaultSeed;
}

// FNV-1a of the current test's full name, so each test has its own stream.
uint64_t TestNameHash() {
  const ::testing::TestInfo *info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  uint64_t hash = 0xcbf29ce484222325ULL;
  if (info == nullptr) return hash;
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

struct CipherCtxDeleter {
  void operator()(EVP_CIPHER_CTX *ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxDeleter>;

void Check(bool ok, const char *what) {
  if (!ok) throw std::runtime_error(std::string("OpenSSL failed: ") + what);
}

}  // namespace

Rng::Rng() : seed_(BaseSeed() ^ TestNameHash()), engine_(seed_) {
  std::cout << "[   SEED   ] AESMUX_TEST_SEED=0x" << std::hex << BaseSeed()
            << std::dec << " (stream 0x" << std::hex << seed_ << std::dec
            << ")\n";
  ::testing::Test::RecordProperty("seed", std::to_string(BaseSeed()));
}

size_t Rng::Uniform(size_t lo, size_t hi) {
  return std::uniform_int_distribution<size_t>(lo, hi)(engine_);
}

Bytes Rng::RandomBytes(size_t len) {
  Bytes out(len);
  Fill(out);
  return out;
}

void Rng::Fill(std::span<uint8_t> out) {
  size_t i = 0;
  while (i < out.size()) {
    uint64_t word = Next();
    for (int b = 0; b < 8 && i < out.size(); ++b, ++i) {
      out[i] = static_cast<uint8_t>(word >> (8 * b));
    }
  }
}

void TierTest::SetUp() {
  const Tier &tier = GetParam();
  const CpuFeatures available = DetectCpuFeatures();
  if (!Supported(tier, available)) {
    GTEST_SKIP() << "CPU lacks "
                 << DescribeCpuFeatures(tier.required & ~available)
                 << " needed by tier " << tier.name;
  }
}

aesmux_aes_key TierTest::EncryptKey(std::span<const uint8_t> key) const {
  aesmux_aes_key enc{};
  ops().expand_key(&enc, key.data(), key.size());
  return enc;
}

aesmux_aes_key TierTest::DecryptKey(std::span<const uint8_t> key) const {
  aesmux_aes_key enc = EncryptKey(key);
  aesmux_aes_key dec{};
  ops().decrypt_key(&dec, &enc);
  return dec;
}

std::string TierName(const ::testing::TestParamInfo<Tier> &info) {
  return std::string(info.param.name);
}

GuardedBuffer::GuardedBuffer(size_t len, size_t misalign)
    : storage_(kGuard + 64 + len + kGuard, kGuardByte), len_(len) {
  // Put the data `misalign` bytes past a 64-byte boundary.
  const auto base = reinterpret_cast<uintptr_t>(storage_.data()) + kGuard;
  const uintptr_t aligned = (base + 63) & ~uintptr_t{63};
  offset_ = aligned - reinterpret_cast<uintptr_t>(storage_.data()) + misalign;
  std::memset(data(), 0, len_);
}

GuardedBuffer::GuardedBuffer(std::span<const uint8_t> contents, size_t misalign)
    : GuardedBuffer(contents.size(), misalign) {
  if (!contents.empty()) std::memcpy(data(), contents.data(), contents.size());
}

Bytes GuardedBuffer::bytes() const {
  return Bytes(storage_.begin() + offset_, storage_.begin() + offset_ + len_);
}

bool GuardedBuffer::GuardsIntact() const {
  for (size_t i = 0; i < storage_.size(); ++i) {
    if (i >= offset_ && i < offset_ + len_) continue;
    if (storage_[i] != kGuardByte) return false;
  }
  return true;
}

PageGuardedBuffer::PageGuardedBuffer(std::span<const uint8_t> contents,
                                     bool flush_end)
    : len_(contents.size()) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t data_pages = (len_ + page - 1) / page + 1;
  map_len_ = (data_pages + 2) * page;
  void *map = mmap(nullptr, map_len_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::runtime_error("mmap");
  map_ = static_cast<uint8_t *>(map);
  mprotect(map_, page, PROT_NONE);
  mprotect(map_ + map_len_ - page, page, PROT_NONE);
  data_ = flush_end ? map_ + map_len_ - page - len_ : map_ + page;
  if (len_ != 0) std::memcpy(data_, contents.data(), len_);
}

PageGuardedBuffer::~PageGuardedBuffer() { munmap(map_, map_len_); }

std::ostream &operator<<(std::ostream &os, const Placement &placement) {
  os << "in+" << placement.in_misalign;
  if (placement.in_place) return os << " in place";
  return os << " out+" << placement.out_misalign;
}

CallBuffers::CallBuffers(std::span<const uint8_t> input,
                         const Placement &placement)
    : in_(input, placement.in_misalign),
      separate_out_(placement.in_place ? 0 : input.size(),
                    placement.out_misalign),
      out_(placement.in_place ? &in_ : &separate_out_) {}

void ForRandomPlacements(Rng &rng, int per_key_size, const CaseCheck &check) {
  for (size_t key_len : kKeySizes) {
    for (int i = 0; i < per_key_size; ++i) {
      Placement placement;
      placement.in_misalign = rng.Uniform(0, 15);
      placement.out_misalign = rng.Uniform(0, 15);
      placement.in_place = rng.Coin();
      check(key_len, placement);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

void ForEveryMisalignment(const CaseCheck &check) {
  for (size_t key_len : kKeySizes) {
    for (size_t in_misalign = 0; in_misalign < 16; ++in_misalign) {
      for (size_t out_misalign = 0; out_misalign < 16; ++out_misalign) {
        check(key_len, Placement{in_misalign, out_misalign, false});
        if (::testing::Test::HasFatalFailure()) return;
      }
      check(key_len, Placement{in_misalign, in_misalign, true});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

struct Reference::State {
  OSSL_LIB_CTX *libctx = nullptr;
  OSSL_PROVIDER *provider = nullptr;
};

Reference &Reference::Get() {
  static Reference *reference = new Reference();
  return *reference;
}

Reference::Reference() : state_(new State) {
  state_->libctx = OSSL_LIB_CTX_new();
  Check(state_->libctx != nullptr, "OSSL_LIB_CTX_new");
  state_->provider = OSSL_PROVIDER_load(state_->libctx, "default");
  Check(state_->provider != nullptr, "OSSL_PROVIDER_load(default)");
}

Reference::~Reference() {
  OSSL_PROVIDER_unload(state_->provider);
  OSSL_LIB_CTX_free(state_->libctx);
  delete state_;
}

Bytes Reference::Crypt(const std::string &cipher_name, bool encrypt,
                       std::span<const uint8_t> key,
                       std::span<const uint8_t> iv,
                       std::span<const uint8_t> in) {
  EVP_CIPHER *cipher =
      EVP_CIPHER_fetch(state_->libctx, cipher_name.c_str(), "provider=default");
  Check(cipher != nullptr, cipher_name.c_str());
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  Check(EVP_CipherInit_ex2(ctx.get(), cipher, key.data(),
                           iv.empty() ? nullptr : iv.data(), encrypt ? 1 : 0,
                           nullptr) == 1,
        "EVP_CipherInit_ex2");
  EVP_CIPHER_free(cipher);
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  Bytes out(in.size() + 32);
  int out_len = 0, final_len = 0;
  Check(EVP_CipherUpdate(ctx.get(), out.data(), &out_len, in.data(),
                         static_cast<int>(in.size())) == 1,
        "EVP_CipherUpdate");
  Check(EVP_CipherFinal_ex(ctx.get(), out.data() + out_len, &final_len) == 1,
        "EVP_CipherFinal_ex");
  out.resize(out_len + final_len);
  return out;
}

Reference::GcmResult Reference::GcmEncrypt(std::span<const uint8_t> key,
                                           std::span<const uint8_t> iv,
                                           std::span<const uint8_t> aad,
                                           std::span<const uint8_t> plaintext) {
  const std::string name = CipherName(key.size(), "GCM");
  EVP_CIPHER *cipher =
      EVP_CIPHER_fetch(state_->libctx, name.c_str(), "provider=default");
  Check(cipher != nullptr, name.c_str());
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  size_t iv_len = iv.size();
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &iv_len),
      OSSL_PARAM_construct_end()};
  Check(EVP_EncryptInit_ex2(ctx.get(), cipher, nullptr, nullptr, params) == 1,
        "EVP_EncryptInit_ex2(ivlen)");
  EVP_CIPHER_free(cipher);
  Check(EVP_EncryptInit_ex2(ctx.get(), nullptr, key.data(), iv.data(),
                            nullptr) == 1,
        "EVP_EncryptInit_ex2(key, iv)");
  int len = 0;
  if (!aad.empty()) {
    Check(EVP_EncryptUpdate(ctx.get(), nullptr, &len, aad.data(),
                            static_cast<int>(aad.size())) == 1,
          "EVP_EncryptUpdate(aad)");
  }
  GcmResult result;
  result.ciphertext.resize(plaintext.size() + 16);
  int out_len = 0;
  Check(EVP_EncryptUpdate(ctx.get(), result.ciphertext.data(), &out_len,
                          plaintext.data(),
                          static_cast<int>(plaintext.size())) == 1,
        "EVP_EncryptUpdate");
  int final_len = 0;
  Check(EVP_EncryptFinal_ex(ctx.get(), result.ciphertext.data() + out_len,
                            &final_len) == 1,
        "EVP_EncryptFinal_ex");
  result.ciphertext.resize(out_len + final_len);
  const OSSL_PARAM get[] = {
      OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG,
                                        result.tag.data(), result.tag.size()),
      OSSL_PARAM_construct_end()};
  Check(
      EVP_CIPHER_CTX_get_params(ctx.get(), const_cast<OSSL_PARAM *>(get)) == 1,
      "EVP_CIPHER_CTX_get_params(tag)");
  return result;
}

std::array<uint8_t, 16> Reference::EncryptBlock(
    std::span<const uint8_t> key, std::span<const uint8_t, 16> block) {
  Bytes out = Crypt(CipherName(key.size(), "ECB"), true, key, {}, block);
  std::array<uint8_t, 16> result;
  std::memcpy(result.data(), out.data(), 16);
  return result;
}

std::string CipherName(size_t key_len, std::string_view mode) {
  return "AES-" + std::to_string(key_len * 8) + "-" + std::string(mode);
}

std::string Hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

::testing::AssertionResult SameBytes(std::span<const uint8_t> actual,
                                     std::span<const uint8_t> expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << "length " << actual.size() << ", expected " << expected.size();
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == expected[i]) continue;
    const size_t from = i & ~size_t{15};
    const size_t n = std::min<size_t>(32, actual.size() - from);
    return ::testing::AssertionFailure()
           << "first difference at byte " << i << " of " << actual.size()
           << "\n  actual   @" << from << ": " << Hex(actual.subspan(from, n))
           << "\n  expected @" << from << ": "
           << Hex(expected.subspan(from, n));
  }
  return ::testing::AssertionSuccess();
}

Bytes FromHex(std::string_view hex) {
  auto nibble = [](char c) -> uint8_t {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw std::invalid_argument("bad hex digit");
  };
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(
        static_cast<uint8_t>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return out;
}

}  // namespace aesmux::kernels::testing
