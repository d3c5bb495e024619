// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// GCM's limits on one message (SP 800-38D: 2^36 - 32 bytes of payload,
// 2^61 bytes of AAD) are kept by the GCM engine itself, for every path,
// before any runs: a call that would cross one fails whole and nothing of
// it is read or written, and the message goes on as before it (its final
// still makes the tag of what came before, as the default provider's
// does after it refuses a call).
//
// Reaching a limit for real takes 64 GiB of work per message. The engine
// instead is told, through its test-only entry, that the message has had
// all but a few bytes already (AssumeMessageLengthsForTesting; the paths'
// own state is left alone), and the calls that would cross the limit get
// buffers of inaccessible memory (PROT_NONE) as large as OpenSSL's
// largest update: a single byte read or written there would kill the test.
// The same for a whole message in one call (Record). Each kernel
// configuration, the fallback path (kernels none, and a message routed
// there by fallback_max_len after the engine routed it late) and the afalg
// path where the kernel has AF_ALG.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <sys/mman.h>

#include <climits>
#include <map>
#include <string>
#include <vector>

#include "provider/openssl/provider_context.h"
#include "provider/route/gcm_engine.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/bytes.h"

namespace aesmux::test {
namespace {

using route::GcmEngine;

// Address space no byte of which may be touched.
class Inaccessible {
 public:
  explicit Inaccessible(size_t size)
      : size_(size),
        base_(mmap(nullptr, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)) {}
  ~Inaccessible() {
    if (base_ != MAP_FAILED) munmap(base_, size_);
  }
  bool ok() const { return base_ != MAP_FAILED; }
  uint8_t *data() const { return static_cast<uint8_t *>(base_); }

 private:
  size_t size_;
  void *base_;
};

struct InstanceFree {
  void operator()(openssl::ProviderContext *instance) const {
    openssl::FreeProviderContext(instance);
  }
};
using Instance = std::unique_ptr<openssl::ProviderContext, InstanceFree>;

// An instance with the settings `lines` ("key = value").
Instance MakeInstance(const std::vector<std::string> &lines,
                      std::string *error) {
  std::map<std::string, std::string, std::less<>> values;
  for (const std::string &line : lines) {
    const size_t eq = line.find(" = ");
    values[line.substr(0, eq)] = line.substr(eq + 3);
  }
  const route::SourceValues config = route::ConfigValuesOf(
      [&values](std::string_view key) -> std::optional<std::string> {
        auto it = values.find(key);
        if (it == values.end()) return std::nullopt;
        return it->second;
      });
  int reason = 0;
  route::Problems problems;
  Instance instance(
      openssl::NewProviderContext(nullptr, config, &problems, &reason));
  *error = problems.Text();
  return instance;
}

// What the router may send a GCM message to under `lines`: checked by the
// served statistics after each message.
void CheckLimits(const std::vector<std::string> &lines, core::Path expected) {
  std::string error;
  Instance instance = MakeInstance(lines, &error);
  ASSERT_NE(instance, nullptr) << error;
  Inaccessible huge(size_t{INT_MAX});
  ASSERT_TRUE(huge.ok());
  const Bytes key(16, 0x4b), iv(12, 0x49), aad(13, 0x41), data(64, 0x50);
  for (const core::Direction direction :
       {core::Direction::kEncrypt, core::Direction::kDecrypt}) {
    SCOPED_TRACE(direction == core::Direction::kEncrypt ? "encrypting"
                                                         : "decrypting");
    GcmEngine engine(instance->router, core::Alg::kAes128Gcm);
    engine.SetKey(key);
    // Payload: the last 16 bytes allowed, and no byte more.
    ASSERT_TRUE(engine.Start(direction, iv));
    ASSERT_TRUE(engine.Aad(aad));
    engine.AssumeMessageLengthsForTesting(aad.size(),
                                          GcmEngine::kMaxDataLen - 16);
    Bytes out(64, 0xa5);
    EXPECT_FALSE(engine.Crypt(out.data(), data.data(), 17));
    EXPECT_FALSE(engine.Crypt(huge.data(), huge.data(), INT_MAX));
    EXPECT_NE(ERR_peek_error(), 0u) << "refused without a reason";
    ERR_clear_error();
    EXPECT_EQ(out, Bytes(64, 0xa5)) << "written past the limit";
    const core::StatsSnapshot before = core::ReadStats();
    EXPECT_TRUE(engine.Crypt(out.data(), data.data(), 16));
    EXPECT_NE(Bytes(out.begin(), out.begin() + 16), Bytes(16, 0xa5));
    EXPECT_EQ(Bytes(out.begin() + 16, out.end()), Bytes(48, 0xa5));
    EXPECT_FALSE(engine.Crypt(out.data(), data.data(), 1));
    ERR_clear_error();
    uint8_t tag[16] = {};
    if (direction == core::Direction::kEncrypt) {
      EXPECT_TRUE(engine.Finish(tag, 16)) << "the message did not go on";
      const core::StatsSnapshot after = core::ReadStats();
      EXPECT_EQ(after.at(core::Alg::kAes128Gcm, expected).requests,
                before.at(core::Alg::kAes128Gcm, expected).requests + 1)
          << "the message was not served by the path under test";
    } else {
      // Without the tag before the payload a decryption never goes to the
      // afalg path; the tag is wrong anyway.
      engine.Finish(tag, 16);
    }
    ERR_clear_error();

    // AAD: the last 5 bytes allowed, and no byte more.
    ASSERT_TRUE(engine.Start(direction, iv));
    engine.AssumeMessageLengthsForTesting(GcmEngine::kMaxAadLen - 5, 0);
    EXPECT_FALSE(engine.Aad({huge.data(), size_t{INT_MAX}}));
    EXPECT_FALSE(engine.Aad({aad.data(), 6}));
    EXPECT_NE(ERR_peek_error(), 0u) << "refused without a reason";
    ERR_clear_error();
    EXPECT_TRUE(engine.Aad({aad.data(), 5}));
    EXPECT_FALSE(engine.Aad({aad.data(), 1}));
    ERR_clear_error();

    // A whole message in one call (a TLS 1.2 record) one byte past either
    // limit: refused unread.
    uint8_t record_tag[16] = {};
    EXPECT_FALSE(engine.Record(direction, iv, aad, huge.data(), huge.data(),
                               GcmEngine::kMaxDataLen + 1, record_tag));
    EXPECT_FALSE(engine.Record(direction, iv,
                               {huge.data(), GcmEngine::kMaxAadLen + 1},
                               out.data(), data.data(), 16, record_tag));
    EXPECT_NE(ERR_peek_error(), 0u) << "refused without a reason";
    ERR_clear_error();
    EXPECT_EQ(Bytes(record_tag, record_tag + 16), Bytes(16, 0));
  }
}

class GcmLimitTest : public testing::TestWithParam<KernelConfig> {};

TEST_P(GcmLimitTest, NoPathRunsPastTheLimits) {
  const KernelConfig &config = GetParam();
  if (const std::string reason = UnsupportedReason(config); !reason.empty()) {
    GTEST_SKIP() << reason;
  }
  std::vector<std::string> lines = config.Settings();
  lines.push_back("afalg = off");
  // A routing configuration's messages here are short: the fallback path.
  CheckLimits(lines, config.kernels == "none" || config.routes()
                         ? core::Path::kFallback
                         : core::Path::kSimd);
}

INSTANTIATE_TEST_SUITE_P(Kernels, GcmLimitTest,
                         testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

TEST(GcmLimit, NoAfalgRequestPastTheLimits) {
  std::string error;
  const std::vector<std::string> lines = {"gcm.afalg = force",
                                          "gcm.afalg_min_len = 1"};
  Instance instance = MakeInstance(lines, &error);
  ASSERT_NE(instance, nullptr) << error;
  if (!instance->router.afalg_on(core::Family::kGcm)) {
    GTEST_SKIP() << "no afalg path for GCM here: "
                 << instance->router.afalg_state(core::Family::kGcm);
  }
  instance.reset();
  CheckLimits(lines, core::Path::kAfalg);
}

}  // namespace
}  // namespace aesmux::test
