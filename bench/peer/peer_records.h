// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The records that bench/peer's EVP benchmarks time (peer_bench,
// evp_floor_bench) and the BoringSSL child serves: one header for the
// programs built against OpenSSL and the one built against BoringSSL, whose
// EVP_CIPHER calls are spelled alike. Include <openssl/evp.h> of either
// library first; kBenchName comes from bench/support/bench_util.h.
//
// One record, on a context whose key was set once:
//   GCM:      EVP_CipherInit_ex(IV), EVP_CipherUpdate(13 bytes of AAD),
//             EVP_CipherUpdate(payload), [decryption: EVP_CTRL_AEAD_SET_TAG],
//             EVP_CipherFinal_ex, [encryption: EVP_CTRL_AEAD_GET_TAG]
//   CBC, CTR, XTS: EVP_CipherInit_ex(IV), EVP_CipherUpdate, EVP_CipherFinal_ex
//   ECB:      EVP_CipherUpdate, EVP_CipherFinal_ex
// (padding off).
#ifndef AESMUX_TESTS_PEER_PEER_RECORDS_H_
#define AESMUX_TESTS_PEER_PEER_RECORDS_H_

#include <openssl/err.h>
#include <openssl/evp.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <utility>

#include "bench/support/bench_util.h"

namespace aesmux::test {

// One column of the table: a mode, key size and direction.
struct Case {
  std::string mode;  // gcm, ctr, cbc, ecb, xts
  int bits;
  bool encrypt;

  std::string CipherName() const {
    return "AES-" + std::to_string(bits) + "-" + ToUpper(mode);
  }
  static std::string ToUpper(std::string s) {
    for (char &c : s) c = static_cast<char>(std::toupper(c));
    return s;
  }
};

struct CtxDeleter {
  void operator()(EVP_CIPHER_CTX *ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CtxPtr = std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter>;

constexpr uint8_t kIv[16] = {0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce,
                             0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88};
constexpr size_t kAadLen = 13;  // a TLS 1.2 record header

inline double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

// The records of one cell on one side: a context keyed once, input, output
// and, for GCM decryption, the ciphertext and tag to verify.
class Records {
 public:
  Records(const EVP_CIPHER *cipher, const Case &c, size_t bytes)
      : case_(c),
        gcm_(c.mode == "gcm"),
        has_iv_(c.mode != "ecb"),
        bytes_(bytes),
        in_(bytes),
        out_(bytes + 16) {
    uint8_t key[64];
    for (int i = 0; i < 64; ++i) key[i] = static_cast<uint8_t>(i * 29 + 3);
    for (size_t i = 0; i < kAadLen; ++i) aad_[i] = static_cast<uint8_t>(i);
    ctx_.reset(EVP_CIPHER_CTX_new());
    if (ctx_ == nullptr ||
        EVP_CipherInit_ex(ctx_.get(), cipher, nullptr, key, nullptr,
                          c.encrypt ? 1 : 0) != 1) {
      Die("cannot key " + c.CipherName());
    }
    EVP_CIPHER_CTX_set_padding(ctx_.get(), 0);
    if (c.mode == "gcm" && !c.encrypt) {
      // The ciphertext and tag of the records to open: the same key, IV
      // and AAD sealed once on a second context.
      CtxPtr seal(EVP_CIPHER_CTX_new());
      if (seal == nullptr ||
          EVP_CipherInit_ex(seal.get(), cipher, nullptr, key, nullptr, 1) != 1) {
        Die("cannot key " + c.CipherName());
      }
      std::swap(ctx_, seal);
      case_.encrypt = true;
      Run();
      case_.encrypt = false;
      std::swap(ctx_, seal);
      std::memcpy(in_.data, out_.data, bytes_);
      std::memcpy(expected_tag_, tag_, 16);
    }
  }

  // One record.
  void Run() {
    if (const char *failed = Attempt()) Die(failed);
  }

  // Decrypting GCM: whether a record is accepted whose tag has one bit
  // flipped (it must not be).
  bool AcceptsWrongTag() {
    expected_tag_[0] ^= 1;
    const char *failed = Attempt();
    expected_tag_[0] ^= 1;
    ERR_clear_error();
    if (failed != nullptr && std::strcmp(failed, "EVP_CipherFinal_ex") != 0) {
      Die(std::string(failed) + " failed before the tag was checked");
    }
    return failed == nullptr;
  }

  // A digest of what a record produces (output XOR-folded into a block,
  // and the tag), in hex: equal on every side or the sides disagree.
  std::string Digest() {
    Run();
    uint8_t fold[32] = {};
    for (size_t i = 0; i < bytes_; ++i) fold[i % 16] ^= out_.data[i];
    std::memcpy(fold + 16, tag_, 16);
    std::string hex;
    char byte[3];
    for (uint8_t b : fold) {
      std::snprintf(byte, sizeof(byte), "%02x", b);
      hex += byte;
    }
    return hex;
  }

  // Seconds of this thread's CPU time for `calls` records: time the
  // scheduler gives to other processes on a shared machine does not count.
  // Not inlined: bench/peer/floor_cost.py counts the records inside it.
  __attribute__((noinline)) double Seconds(long calls) {
    const double start = ThreadCpuSeconds();
    for (long i = 0; i < calls; ++i) Run();
    return ThreadCpuSeconds() - start;
  }

 private:
  // One record; the call that failed, or null.
  const char *Attempt() {
    EVP_CIPHER_CTX *ctx = ctx_.get();
    int len = 0, final_len = 0;
    const int enc = case_.encrypt ? 1 : 0;
    if (has_iv_ &&
        EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, kIv, enc) != 1) {
      return "EVP_CipherInit_ex (IV)";
    }
    if (gcm_ &&
        EVP_CipherUpdate(ctx, nullptr, &len, aad_, kAadLen) != 1) {
      return "EVP_CipherUpdate (AAD)";
    }
    if (EVP_CipherUpdate(ctx, out_.data, &len, in_.data,
                         static_cast<int>(bytes_)) != 1) {
      return "EVP_CipherUpdate";
    }
    if (gcm_ && !case_.encrypt &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, expected_tag_) !=
            1) {
      return "EVP_CTRL_AEAD_SET_TAG";
    }
    if (EVP_CipherFinal_ex(ctx, out_.data + len, &final_len) != 1) {
      return "EVP_CipherFinal_ex";
    }
    if (gcm_ && case_.encrypt &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag_) != 1) {
      return "EVP_CTRL_AEAD_GET_TAG";
    }
    return nullptr;
  }

  Case case_;
  // The mode as flags: a record compares no strings.
  bool gcm_;
  bool has_iv_;
  size_t bytes_;
  Buffer in_, out_;
  uint8_t aad_[kAadLen];
  uint8_t tag_[16] = {};
  uint8_t expected_tag_[16] = {};
  CtxPtr ctx_;
};

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_PEER_PEER_RECORDS_H_
