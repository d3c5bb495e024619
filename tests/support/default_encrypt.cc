// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// DefaultEncrypt (provider_env.h), apart from provider_env.cc: a failure
// here fails the running GoogleTest test, and the benchmarks link
// provider_env.cc without GoogleTest.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "tests/support/provider_env.h"

namespace aesmux::test {

Bytes DefaultEncrypt(const ProviderEnv &env, const char *algorithm,
                     const Bytes &key, const Bytes &iv, const Bytes &plain,
                     bool padding) {
  CipherPtr cipher = env.Default(algorithm);
  CipherCtxPtr ctx = NewCipherCtx();
  Bytes out(plain.size() + 16);  // and a block of padding
  int len = 0, tail = 0;
  if (!EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(), iv.data(),
                           nullptr) ||
      !EVP_CIPHER_CTX_set_padding(ctx.get(), padding) ||
      !EVP_EncryptUpdate(ctx.get(), out.data(), &len, plain.data(),
                         static_cast<int>(plain.size())) ||
      !EVP_EncryptFinal_ex(ctx.get(), out.data() + len, &tail)) {
    ADD_FAILURE() << "the default provider failed: " << TakeErrors();
    return {};
  }
  out.resize(static_cast<size_t>(len + tail));
  return out;
}

}  // namespace aesmux::test
