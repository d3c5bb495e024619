// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support: a private library context holding aesmux (built in this
// tree) next to OpenSSL's default provider, with a given configuration.
#ifndef AESMUX_TESTS_SUPPORT_PROVIDER_ENV_H_
#define AESMUX_TESTS_SUPPORT_PROVIDER_ENV_H_

#include <openssl/evp.h>
#include <openssl/provider.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/bytes.h"

namespace aesmux::test {

struct CipherDeleter {
  void operator()(EVP_CIPHER *cipher) const { EVP_CIPHER_free(cipher); }
};
struct CipherCtxDeleter {
  void operator()(EVP_CIPHER_CTX *ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherPtr = std::unique_ptr<EVP_CIPHER, CipherDeleter>;
using CipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxDeleter>;

inline CipherCtxPtr NewCipherCtx() { return CipherCtxPtr(EVP_CIPHER_CTX_new()); }

// Path of the aesmux module under test (set by CMake, or
// AESMUX_TEST_MODULE).
std::string ModulePath();

// Makes ModulePath() a copy of the module that any user can load, for a
// test whose child becomes another user: the build tree may sit where
// only its owner may enter (a root user's clone in /root). Copied once
// per process into a directory of its own under /tmp, removed when the
// process that made it exits (not its forked children). False, with the
// reason in *why, if it could not be made.
bool UseAModuleAnyUserCanLoad(std::string *why);

class ProviderEnv {
 public:
  // Whether what aesmux prints on stderr while it loads is captured into
  // error() (kCapture: descriptor 2 is a temporary file meanwhile), or
  // left on this process's stderr (kLeave). aesmux prints only into the
  // file stderr was when it was loaded (provider/core/diagnostics.h): a
  // test of what it prints later loads it with kLeave, and kCapture
  // captures only in a process where aesmux.so is not loaded already.
  enum StderrAtLoad { kCapture, kLeave };

  // `settings` are lines of aesmux's openssl.cnf section, e.g.
  // "kernels = none" or "cbc.fallback_max_len = 64".
  explicit ProviderEnv(const std::vector<std::string> &settings = {},
                       StderrAtLoad stderr_at_load = kCapture);
  ~ProviderEnv();
  ProviderEnv(const ProviderEnv &) = delete;
  ProviderEnv &operator=(const ProviderEnv &) = delete;

  // Whether aesmux loaded; if not, error() holds OpenSSL's error queue.
  bool loaded() const { return aesmux_ != nullptr; }
  const std::string &error() const { return error_; }

  OSSL_LIB_CTX *libctx() const { return libctx_; }
  OSSL_PROVIDER *aesmux() const { return aesmux_; }

  // EVP_CIPHER_fetch with "provider=aesmux" / "provider=default".
  CipherPtr Aesmux(std::string_view name) const;
  CipherPtr Default(std::string_view name) const;

  // A provider parameter of aesmux as text ("tier", "stats", ...).
  std::string ProviderParam(const char *key) const;
  // A routing counter: Stat("AES-128-CBC", "simd", "requests").
  uint64_t Stat(std::string_view alg, std::string_view path,
                std::string_view field) const;
  // A per-algorithm counter: Stat("AES-128-GCM", "key_setups").
  uint64_t Stat(std::string_view alg, std::string_view field) const;

 private:
  OSSL_LIB_CTX *libctx_ = nullptr;
  OSSL_PROVIDER *aesmux_ = nullptr;
  OSSL_PROVIDER *default_ = nullptr;
  std::string error_;
};

// The default provider's encryption of `plain` as one message, with
// padding on or off; empty, and the test failed, if the provider fails.
// In aesmux_test_support (default_encrypt.cc), which links GoogleTest.
Bytes DefaultEncrypt(const ProviderEnv &env, const char *algorithm,
                     const Bytes &key, const Bytes &iv, const Bytes &plain,
                     bool padding);

// Drains OpenSSL's error queue of this thread into text (one line each).
std::string TakeErrors();

// The reason code of the most recent error on the queue (0 if none); the
// queue is left untouched.
int LastErrorReason();

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_PROVIDER_ENV_H_
