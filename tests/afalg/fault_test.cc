// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Fault injection on the afalg path, at the engines (linked in, so faults
// can be armed): whatever fails — the op socket closed mid-request, a full
// ring, EBUSY, the driver refusing a length, socket or ring set-up, no
// memory for a bounce buffer — the request is served again on the CPU's
// path from its original input, in place too (the output has already been
// written over it when the failure is reported), the hand-off is counted
// with its reason, and the path rests for that algorithm after a failure
// that says it is broken.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include "kernels/tiers.h"
#include "provider/afalg/afalg.h"
#include "provider/afalg/fault.h"
#include "provider/afalg/ring.h"
#include "provider/fallback/fallback.h"
#include "provider/route/block_engine.h"
#include "provider/route/gcm_engine.h"
#include "provider/route/router.h"
#include "provider/core/stats.h"
#include "tests/afalg/afalg_support.h"

namespace aesmux::test {
namespace {

using afalg::Fault;
using core::Alg;
using core::Direction;
using core::Handoff;

// CBC encryption by the default provider (the reference).
Bytes ReferenceCbc(const Bytes &key, const Bytes &iv, const Bytes &plain) {
  auto ctx = NewCipherCtx();
  Bytes out(plain.size());
  int len = 0;
  EVP_EncryptInit_ex2(ctx.get(), EVP_aes_128_cbc(), key.data(), iv.data(),
                      nullptr);
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  EVP_EncryptUpdate(ctx.get(), out.data(), &len, plain.data(),
                    static_cast<int>(plain.size()));
  return out;
}

// AES-128-GCM sealing by the default provider (the reference): the
// ciphertext followed by the 16-byte tag.
Bytes ReferenceGcm(const Bytes &key, const Bytes &iv, const Bytes &aad,
                   const Bytes &plain) {
  auto ctx = NewCipherCtx();
  Bytes out(plain.size() + 16);
  int len = 0;
  EVP_EncryptInit_ex2(ctx.get(), EVP_aes_128_gcm(), key.data(), iv.data(),
                      nullptr);
  EVP_EncryptUpdate(ctx.get(), nullptr, &len, aad.data(),
                    static_cast<int>(aad.size()));
  EVP_EncryptUpdate(ctx.get(), out.data(), &len, plain.data(),
                    static_cast<int>(plain.size()));
  EVP_EncryptFinal_ex(ctx.get(), out.data() + len, &len);
  EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                      out.data() + plain.size());
  return out;
}

class AfalgFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_AFALG();
    std::string error;
    library_ = fallback::FallbackLibrary::Create(&error);
    ASSERT_NE(library_, nullptr) << error;
    route::Settings settings;
    settings.tier = kernels::BestTier(kernels::DetectCpuFeatures());
    for (route::FamilySettings &family : settings.families) {
      family.afalg = route::AfalgPolicy::kForce;
    }
    router_ = std::make_unique<route::Router>(settings, library_.get());
    ASSERT_TRUE(router_->afalg_on(core::Family::kCbc))
        << router_->afalg_state(core::Family::kCbc);
    afalg::Service::Get().SetBackoffForTesting(std::chrono::hours(1));
    afalg::Service::Get().ResetHealthForTesting();
    afalg::ClearFaults();
  }
  void TearDown() override {
    afalg::ClearFaults();
    // The Service lives while a Router does: none after a skipped SetUp.
    if (router_ != nullptr) afalg::Service::Get().ResetHealthForTesting();
  }

  static uint64_t Count(Alg alg, core::Path path) {
    return core::ReadStats().at(alg, path).requests;
  }
  static uint64_t Count(Alg alg, Handoff handoff) {
    return core::ReadStats().at(alg, handoff).requests;
  }

  // One in-place AES-128-CBC encryption of `len` bytes through an engine;
  // checks the output and the chaining value against the reference.
  void EncryptInPlace(size_t len, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const Bytes key = RandomBytes(rng, 16), iv = RandomBytes(rng, 16);
    const Bytes plain = RandomBytes(rng, len);
    const Bytes expected = ReferenceCbc(key, iv, plain);
    route::BlockEngine engine(*router_, Alg::kAes128Cbc);
    engine.SetKey(key);
    Bytes buffer = plain;
    Bytes chain = iv;
    const core::Segment segment{buffer.data(), buffer.data(), len};
    ASSERT_TRUE(engine.Run(Direction::kEncrypt, chain.data(),
                           std::span(&segment, 1)));
    EXPECT_EQ(ToHex(buffer), ToHex(expected));
    EXPECT_EQ(ToHex(chain), ToHex(expected.data() + len - 16, 16));
  }

  // Arms `fault`, runs one request that must be handed on for `reason`,
  // then one that must (or must not, per `rests`) be refused while the
  // path rests.
  void ExpectHandedOn(Fault fault, int error, Handoff reason, bool rests) {
    const uint64_t handed = Count(Alg::kAes128Cbc, reason);
    const uint64_t simd = Count(Alg::kAes128Cbc, core::Path::kSimd) +
                          Count(Alg::kAes128Cbc, core::Path::kFallback);
    afalg::InjectFault(fault, 1, error);
    EncryptInPlace(4096, 1);
    EXPECT_EQ(Count(Alg::kAes128Cbc, reason), handed + 1)
        << core::HandoffName(reason);
    EXPECT_EQ(Count(Alg::kAes128Cbc, core::Path::kSimd) +
                  Count(Alg::kAes128Cbc, core::Path::kFallback),
              simd + 1);
    const uint64_t resting = Count(Alg::kAes128Cbc, Handoff::kUnhealthy);
    const uint64_t served = Count(Alg::kAes128Cbc, core::Path::kAfalg);
    EncryptInPlace(4096, 2);
    if (rests) {
      EXPECT_EQ(Count(Alg::kAes128Cbc, Handoff::kUnhealthy), resting + 1);
      EXPECT_EQ(Count(Alg::kAes128Cbc, core::Path::kAfalg), served);
      // What `aesmux info` shows (afalg.cbc).
      const std::string report = router_->afalg_report(core::Family::kCbc);
      EXPECT_NE(report.find("; since: AES-128-CBC: 1 failed request ran on "
                            "the CPU (last " +
                            std::string(core::HandoffName(reason))),
                std::string::npos)
          << report;
      EXPECT_NE(report.find("resting "), std::string::npos) << report;
    } else {
      EXPECT_EQ(Count(Alg::kAes128Cbc, core::Path::kAfalg), served + 1);
    }
  }

  std::unique_ptr<fallback::FallbackLibrary> library_;
  std::unique_ptr<route::Router> router_;
};

TEST_F(AfalgFaultTest, HealthyPathServesInPlaceRequests) {
  const uint64_t served = Count(Alg::kAes128Cbc, core::Path::kAfalg);
  for (size_t len : {16u, 4096u, 65536u, 65536u + 16u, 200000u}) {
    EncryptInPlace(len, len);
  }
  EXPECT_EQ(Count(Alg::kAes128Cbc, core::Path::kAfalg), served + 5);
}

TEST_F(AfalgFaultTest, OpSocketClosedMidRequest) {
  ExpectHandedOn(Fault::kCloseOpSocket, -EBADF, Handoff::kIoError, true);
}

TEST_F(AfalgFaultTest, EbusyFromTheKernel) {
  ExpectHandedOn(Fault::kCompletionError, -EBUSY, Handoff::kBusy, true);
}

TEST_F(AfalgFaultTest, DriverRefusingALength) {
  // Only 4096-byte requests are refused; the path then rests for AES-128-CBC
  // alone.
  afalg::InjectFault(Fault::kCompletionError, -1, -EINVAL, 4096);
  const uint64_t refused = Count(Alg::kAes128Cbc, Handoff::kRefused);
  EncryptInPlace(4096, 3);
  EXPECT_EQ(Count(Alg::kAes128Cbc, Handoff::kRefused), refused + 1);
  const uint64_t resting = Count(Alg::kAes128Cbc, Handoff::kUnhealthy);
  EncryptInPlace(1024, 4);
  EXPECT_EQ(Count(Alg::kAes128Cbc, Handoff::kUnhealthy), resting + 1);
  // Another algorithm is not affected.
  const uint64_t ecb = Count(Alg::kAes256Ecb, core::Path::kAfalg);
  route::BlockEngine engine(*router_, Alg::kAes256Ecb);
  const Bytes key(32, 9);
  engine.SetKey(key);
  Bytes data(1024, 1);
  const core::Segment segment{data.data(), data.data(), data.size()};
  ASSERT_TRUE(engine.Run(Direction::kEncrypt, nullptr, std::span(&segment, 1)));
  EXPECT_EQ(Count(Alg::kAes256Ecb, core::Path::kAfalg), ecb + 1);
  // Once the rest is over, lengths the driver takes are served again.
  afalg::Service::Get().ResetHealthForTesting();
  const uint64_t served = Count(Alg::kAes128Cbc, core::Path::kAfalg);
  EncryptInPlace(1024, 5);
  EXPECT_EQ(Count(Alg::kAes128Cbc, core::Path::kAfalg), served + 1);
}

TEST_F(AfalgFaultTest, RingFullSpillsOverWithoutResting) {
  ExpectHandedOn(Fault::kRingFull, -EAGAIN, Handoff::kRingFull, false);
}

TEST_F(AfalgFaultTest, SocketSetupFailure) {
  ExpectHandedOn(Fault::kSocketSetup, -EPERM, Handoff::kSetup, true);
}

// Out of descriptors is no fault of the path: it does not rest.
TEST_F(AfalgFaultTest, SocketSetupOutOfDescriptors) {
  ExpectHandedOn(Fault::kSocketSetup, -EMFILE, Handoff::kFdBudget, false);
}

TEST_F(AfalgFaultTest, RingSetupFailureInANewThread) {
  const uint64_t setup = Count(Alg::kAes128Cbc, Handoff::kSetup);
  std::thread thread([&] {
    afalg::InjectFault(Fault::kRingSetup, 1, -EPERM);
    EncryptInPlace(2048, 6);
  });
  thread.join();
  EXPECT_EQ(Count(Alg::kAes128Cbc, Handoff::kSetup), setup + 1);
}

// A thread's ring maps its bounce buffers on first use (ring.h): in a new
// thread, no memory for one (mmap or madvise failing) hands the request to
// the CPU, and the path rests as for any set-up failure.
TEST_F(AfalgFaultTest, NoMemoryForABounceBufferInANewThread) {
  std::thread thread([&] {
    ExpectHandedOn(Fault::kBounceMap, -ENOMEM, Handoff::kSetup, true);
  });
  thread.join();
}

TEST_F(AfalgFaultTest, GcmFailureInPlaceLosesNothing) {
  std::mt19937_64 rng(14);
  const Bytes key = RandomBytes(rng, 16), iv = RandomBytes(rng, 12),
              aad = RandomBytes(rng, 20), plain = RandomBytes(rng, 3000);
  route::GcmEngine sealer(*router_, Alg::kAes128Gcm);
  sealer.SetKey(key);
  Bytes data = plain;
  uint8_t tag[16];
  ASSERT_TRUE(sealer.Start(Direction::kEncrypt, iv));
  ASSERT_TRUE(sealer.Aad(aad));
  ASSERT_TRUE(sealer.Crypt(data.data(), data.data(), data.size()));
  ASSERT_TRUE(sealer.Finish(tag, 16));
  Bytes sealed = data;
  sealed.insert(sealed.end(), tag, tag + 16);
  ASSERT_EQ(ToHex(sealed), ToHex(ReferenceGcm(key, iv, aad, plain)));

  const uint64_t busy = Count(Alg::kAes128Gcm, Handoff::kBusy);
  afalg::InjectFault(Fault::kCompletionError, 1, -EBUSY);
  route::GcmEngine opener(*router_, Alg::kAes128Gcm);
  opener.SetKey(key);
  ASSERT_TRUE(opener.Start(Direction::kDecrypt, iv));
  opener.ExpectTag({tag, 16});
  ASSERT_TRUE(opener.Aad(aad));
  ASSERT_TRUE(opener.Crypt(data.data(), data.data(), data.size()));
  EXPECT_TRUE(opener.Finish(tag, 16));
  EXPECT_EQ(ToHex(data), ToHex(plain));
  EXPECT_EQ(Count(Alg::kAes128Gcm, Handoff::kBusy), busy + 1);
}

// A whole record (GcmEngine::Record, TLS 1.2's) the kernel fails, in
// place: sealed and opened again on the CPU's path from the copy made for
// the kernel, each counted once as a hand-off and once where it was
// served; a tag the kernel rejects is rejected there too.
TEST_F(AfalgFaultTest, GcmRecordFailureInPlaceLosesNothing) {
  std::mt19937_64 rng(16);
  const Bytes key = RandomBytes(rng, 16), iv = RandomBytes(rng, 12),
              aad = RandomBytes(rng, 13), plain = RandomBytes(rng, 1000);
  const Bytes expected = ReferenceGcm(key, iv, aad, plain);
  route::GcmEngine engine(*router_, Alg::kAes128Gcm);
  engine.SetKey(key);
  const uint64_t busy = Count(Alg::kAes128Gcm, Handoff::kBusy);
  // The CPU's path: the kernels where this CPU has a tier, else the
  // fallback (arm64).
  auto cpu = [] {
    return Count(Alg::kAes128Gcm, core::Path::kSimd) +
           Count(Alg::kAes128Gcm, core::Path::kFallback);
  };
  const uint64_t on_cpu = cpu();
  Bytes data = plain;
  uint8_t tag[16];
  afalg::InjectFault(Fault::kCompletionError, 1, -EBUSY);
  ASSERT_TRUE(engine.Record(Direction::kEncrypt, iv, aad, data.data(),
                            data.data(), data.size(), tag));
  Bytes sealed = data;
  sealed.insert(sealed.end(), tag, tag + 16);
  EXPECT_EQ(ToHex(sealed), ToHex(expected));

  // EBUSY made the path rest: end the rest, so that the next record
  // reaches the kernel again.
  afalg::Service::Get().ResetHealthForTesting();
  afalg::InjectFault(Fault::kCompletionError, 1, -EBUSY);
  ASSERT_TRUE(engine.Record(Direction::kDecrypt, iv, aad, data.data(),
                            data.data(), data.size(), tag));
  EXPECT_EQ(ToHex(data), ToHex(plain));
  EXPECT_EQ(Count(Alg::kAes128Gcm, Handoff::kBusy), busy + 2);
  EXPECT_EQ(cpu(), on_cpu + 2);

  // On the kernel itself, then a tag it rejects (EBADMSG): the CPU's path
  // refuses it too.
  afalg::Service::Get().ResetHealthForTesting();
  const uint64_t afalg = Count(Alg::kAes128Gcm, core::Path::kAfalg);
  ASSERT_TRUE(engine.Record(Direction::kEncrypt, iv, aad, data.data(),
                            data.data(), data.size(), tag));
  EXPECT_EQ(Count(Alg::kAes128Gcm, core::Path::kAfalg), afalg + 1);
  tag[0] ^= 1;
  EXPECT_FALSE(engine.Record(Direction::kDecrypt, iv, aad, data.data(),
                             data.data(), data.size(), tag));
}

// The probe checks every key size with a known answer: a driver that
// gets one size wrong keeps that size on the CPU, the others on the path,
// and says so (in a child: the Service of this process has probed).
TEST_F(AfalgFaultTest, ProbeKeepsAKeySizeTheDriverGetsWrongOnTheCpu) {
  const std::string result = RunInChild([this] {
    afalg::InjectFault(Fault::kProbeAnswer, -1, -EIO, 24);
    route::Settings settings;
    settings.tier = kernels::BestTier(kernels::DetectCpuFeatures());
    for (route::FamilySettings &family : settings.families) {
      family.afalg = route::AfalgPolicy::kForce;
    }
    route::Router router(settings, library_.get());
    afalg::ClearFaults();
    const std::string &state = router.afalg_state(core::Family::kCbc);
    if (state.find("keys of 16 and 32 bytes; not 24-byte keys: wrong answer") ==
        std::string::npos) {
      std::fprintf(stderr, "afalg.cbc: %s\n", state.c_str());
      return 1;
    }
    if (!router.AfalgServes(Alg::kAes128Cbc) ||
        router.AfalgServes(Alg::kAes192Cbc) ||
        !router.AfalgServes(Alg::kAes256Cbc)) {
      return 2;
    }
    if (router.route_description(Alg::kAes192Cbc).find(
            "not afalg: its driver failed the probe for 24-byte keys") ==
        std::string::npos) {
      return 3;
    }
    // AES-192 on the CPU, as the default provider; AES-128 on the path.
    const uint64_t afalg_192 = Count(Alg::kAes192Cbc, core::Path::kAfalg);
    std::mt19937_64 rng(16);
    const Bytes key = RandomBytes(rng, 24), iv = RandomBytes(rng, 16);
    const Bytes plain = RandomBytes(rng, 4096);
    route::BlockEngine engine(router, Alg::kAes192Cbc);
    engine.SetKey(key);
    Bytes out(plain.size()), chain = iv;
    const core::Segment segment{out.data(), plain.data(), plain.size()};
    if (!engine.Run(Direction::kEncrypt, chain.data(), std::span(&segment, 1))) {
      return 4;
    }
    auto reference = NewCipherCtx();
    Bytes expected(plain.size());
    int len = 0;
    EVP_EncryptInit_ex2(reference.get(), EVP_aes_192_cbc(), key.data(),
                        iv.data(), nullptr);
    EVP_CIPHER_CTX_set_padding(reference.get(), 0);
    EVP_EncryptUpdate(reference.get(), expected.data(), &len, plain.data(),
                      static_cast<int>(plain.size()));
    if (out != expected) return 5;
    return Count(Alg::kAes192Cbc, core::Path::kAfalg) == afalg_192 ? 0 : 6;
  });
  EXPECT_EQ(result, "");
}

// On a CPU driver (ECB: no offload driver has it in the VM suites), whose
// requests complete inline; an offload driver's take one too, but the
// timeout that bounds their waits (ring.h) may add one a second.
TEST_F(AfalgFaultTest, OneIoUringEnterPerSynchronousRequest) {
  std::mt19937_64 rng(15);
  const Bytes key = RandomBytes(rng, 16);
  route::BlockEngine engine(*router_, Alg::kAes128Ecb);
  engine.SetKey(key);
  Bytes data = RandomBytes(rng, 16384), out(16384);
  // The thread's ring and the key's sockets exist after the first.
  const core::Segment first{out.data(), data.data(), data.size()};
  ASSERT_TRUE(engine.Run(Direction::kEncrypt, nullptr, std::span(&first, 1)));
  ASSERT_FALSE(afalg::Service::Get().offload(core::Family::kEcb));
  const uint64_t enters = afalg::RingEnters();
  constexpr int kRequests = 50;
  for (int i = 0; i < kRequests; ++i) {
    const core::Segment segment{out.data(), data.data(), data.size()};
    ASSERT_TRUE(
        engine.Run(Direction::kEncrypt, nullptr, std::span(&segment, 1)));
  }
  EXPECT_EQ(afalg::RingEnters() - enters, static_cast<uint64_t>(kRequests));
}

}  // namespace
}  // namespace aesmux::test
