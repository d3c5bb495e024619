// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// What a cipher context points into (its instance's router, settings and
// fallback library, the afalg path's process state) outlives the context:
// the provider's last OSSL_PROVIDER_unload before the context is freed
// leaves the instance in place until then (libcrypto holds the provider
// for the context's fetched cipher), and every algorithm's context goes on
// serving, on the kernels and on the fallback path (whose library is made
// only then). The ENGINE's contexts hold their instance themselves
// (tests/engine/engine_test.cc). Under AddressSanitizer and valgrind an
// access to a freed instance fails the test whatever the bytes.
#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "provider/core/algorithm.h"
#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

struct LibCtxFree {
  void operator()(OSSL_LIB_CTX *libctx) const { OSSL_LIB_CTX_free(libctx); }
};

// One message on `ctx` (keyed already): GCM on `iv`, the others re-keyed
// with `key`. Empty if a call failed.
Bytes Message(EVP_CIPHER_CTX *ctx, bool gcm, const Bytes &key,
              const Bytes &iv) {
  const Bytes data(100, 0x64);
  Bytes out(data.size() + 32);
  int len = 0, tail = 0;
  if (!EVP_EncryptInit_ex2(ctx, nullptr, gcm ? nullptr : key.data(),
                           iv.data(), nullptr) ||
      !EVP_EncryptUpdate(ctx, out.data(), &len, data.data(), 96) ||
      !EVP_EncryptFinal_ex(ctx, out.data() + len, &tail)) {
    return {};
  }
  out.resize(static_cast<size_t>(len + tail));
  if (gcm) {
    Bytes tag(16);
    if (!EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag.data())) {
      return {};
    }
    out.insert(out.end(), tag.begin(), tag.end());
  }
  return out;
}

class ContextLifetimeTest : public testing::TestWithParam<const char *> {};

TEST_P(ContextLifetimeTest, ContextsOutliveTheProvidersLastUnload) {
  // The kernels, or none (the fallback path), from the environment: the
  // module is loaded without a configuration.
  if (std::string(GetParam()) == "none") setenv("AESMUX_KERNELS", "none", 1);
  std::unique_ptr<OSSL_LIB_CTX, LibCtxFree> libctx(OSSL_LIB_CTX_new());
  ASSERT_NE(libctx, nullptr);
  OSSL_PROVIDER *aesmux = OSSL_PROVIDER_load(libctx.get(), ModulePath().c_str());
  unsetenv("AESMUX_KERNELS");
  ASSERT_NE(aesmux, nullptr) << TakeErrors();
  OSSL_PROVIDER *reference = OSSL_PROVIDER_load(libctx.get(), "default");
  ASSERT_NE(reference, nullptr);
  Bytes key(64), other_key(64);
  for (size_t i = 0; i < key.size(); ++i) {
    key[i] = static_cast<uint8_t>(i * 7 + 1);  // distinct XTS halves
    other_key[i] = static_cast<uint8_t>(i * 13 + 5);
  }
  const Bytes iv(16, 0x76), data(64, 0x64);
  std::vector<CipherCtxPtr> contexts;
  for (const core::AlgInfo &info : core::kAlgs) {
    const std::string name(info.name);
    CipherPtr cipher(
        EVP_CIPHER_fetch(libctx.get(), name.c_str(), "provider=aesmux"));
    ASSERT_NE(cipher, nullptr) << name;
    CipherCtxPtr ctx = NewCipherCtx();
    Bytes out(96);
    int len = 0;
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                    iv.data(), nullptr));
    ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, data.data(),
                                  64));
    contexts.push_back(std::move(ctx));
  }
  ASSERT_TRUE(OSSL_PROVIDER_unload(aesmux));
  for (size_t a = 0; a < core::kNumAlgs; ++a) {
    const core::AlgInfo &info = core::kAlgs[a];
    SCOPED_TRACE(std::string(info.name));
    const bool gcm = info.family == core::Family::kGcm;
    CipherPtr theirs(EVP_CIPHER_fetch(
        libctx.get(), std::string(info.name).c_str(), "provider=default"));
    CipherCtxPtr ref = NewCipherCtx();
    ASSERT_TRUE(EVP_EncryptInit_ex2(ref.get(), theirs.get(), key.data(),
                                    iv.data(), nullptr));
    const Bytes expected = Message(ref.get(), gcm, other_key, iv);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(ToHex(Message(contexts[a].get(), gcm, other_key, iv)),
              ToHex(expected));
    // A copy made now goes on in the same instance.
    CipherCtxPtr copy = NewCipherCtx();
    ASSERT_TRUE(EVP_CIPHER_CTX_copy(copy.get(), contexts[a].get()));
    EXPECT_EQ(ToHex(Message(copy.get(), gcm, other_key, iv)),
              ToHex(expected));
  }
  contexts.clear();  // the instance goes with the last of them
  OSSL_PROVIDER_unload(reference);
}

INSTANTIATE_TEST_SUITE_P(Paths, ContextLifetimeTest,
                         testing::Values("kernels", "none"));

}  // namespace
}  // namespace aesmux::test
