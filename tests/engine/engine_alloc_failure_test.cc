// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Running out of memory in the ENGINE aesmux (tests/support/
// alloc_sweep.h): its initialisation (an instance made as the provider
// makes one) and every algorithm's sequence on its legacy ciphers, with
// every allocation failing in turn: nothing aborts, and every call that
// fails says why. The ENGINE module's own hidden C++ runtime allocates
// through malloc, which the hooks fail as they fail operator new and
// OpenSSL's allocator.
#include <gtest/gtest.h>
#include <openssl/engine.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "provider/core/algorithm.h"
#include "tests/engine/engine_env.h"
#include "tests/support/alloc_sweep.h"

namespace aesmux::test {
namespace {

class EngineAllocFailureTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    engine_.reset(AesmuxEngine(&error));
    ASSERT_NE(engine_, nullptr) << error;
  }
  EnginePtr engine_;
};

const EVP_CIPHER *EngineCipher(ENGINE *e, const core::AlgInfo &alg) {
  return ENGINE_get_cipher(
      e, EVP_CIPHER_get_nid(EVP_get_cipherbyname(std::string(alg.name).c_str())));
}

TEST_F(EngineAllocFailureTest, EveryAlgorithmFailsCleanly) {
  EngineConfig config(engine_.get(), {{"AFALG", "off"}});
  ASSERT_TRUE(config.ok()) << config.error();
  const Buffers buffers;
  for (const core::AlgInfo &alg : core::kAlgs) {
    SCOPED_TRACE(std::string(alg.name));
    const EVP_CIPHER *cipher = EngineCipher(engine_.get(), alg);
    ASSERT_NE(cipher, nullptr);
    FailEachAllocation([&](Checker &check) {
      Sequence(cipher, alg.family, buffers, 4096, check);
    });
  }
}

// The ENGINE initialised (its instance made, with the default settings:
// the afalg path under `auto`), a GCM and a CBC sequence, finished again.
// A refused initialisation is reported on stderr, silenced here.
TEST_F(EngineAllocFailureTest, InitialisationAndFirstMessages) {
  const Buffers buffers;
  const SilencedStderr silenced;
  int initialised = 0;
  ENGINE *e = engine_.get();
  const core::AlgInfo &gcm = core::Info(core::Alg::kAes128Gcm);
  const core::AlgInfo &cbc = core::Info(core::Alg::kAes256Cbc);
  const EVP_CIPHER *gcm_cipher = EngineCipher(e, gcm);
  const EVP_CIPHER *cbc_cipher = EngineCipher(e, cbc);
  ASSERT_NE(gcm_cipher, nullptr);
  ASSERT_NE(cbc_cipher, nullptr);
  FailEachAllocation(
      [&](Checker &check) {
        if (!check(ENGINE_init(e))) return;
        ++initialised;
        Sequence(gcm_cipher, gcm.family, buffers, 64, check);
        Sequence(cbc_cipher, cbc.family, buffers, 64, check);
        ENGINE_finish(e);
      },
      50000);
  EXPECT_GT(initialised, 0) << "the ENGINE never initialised";
}

}  // namespace
}  // namespace aesmux::test
