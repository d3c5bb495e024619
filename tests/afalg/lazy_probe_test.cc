// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// When the afalg path is probed (route/router.h): under auto not at load
// but on a family's first request that may go there, GCM's first context,
// or when someone asks;
// under force at load; in a forked child under afalg_fork = off never.
// These run on any kernel: the probe's answer does not matter here, only
// whether the router has settled the family.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kernels/tiers.h"
#include "provider/core/algorithm.h"
#include "provider/fallback/fallback.h"
#include "provider/route/router.h"
#include "provider/route/settings.h"
#include "tests/afalg/afalg_support.h"

namespace aesmux::test {
namespace {

using core::Alg;
using core::Family;

constexpr char kNotProbed[] = "auto, not probed";

bool Settled(const route::Router &router, Family family) {
  return !router.afalg_state_so_far(family).starts_with(kNotProbed);
}

route::Settings AutoSettings() {
  route::Settings settings;
  settings.tier = kernels::BestTier(kernels::DetectCpuFeatures());
  return settings;  // afalg = auto everywhere, afalg_min_len 16K
}

TEST(AfalgLazyProbe, AutoProbesOnAFamilysFirstRequestThatMayGoThere) {
  fallback::FallbackLibrary library;
  const route::Router router(AutoSettings(), &library);
  for (const core::AlgInfo &info : core::kAlgs) {
    EXPECT_FALSE(Settled(router, info.family)) << info.name;
  }
  const uint64_t min_len = router.AfalgMinLen(Alg::kAes128Cbc);
  ASSERT_EQ(min_len, router.settings().auto_afalg_min_len);
  EXPECT_NE(router.Choose(Alg::kAes128Cbc, min_len - 1), core::Path::kAfalg);
  EXPECT_FALSE(Settled(router, Family::kCbc))
      << "a request below afalg_min_len probed";

  router.Choose(Alg::kAes256Cbc, min_len);
  EXPECT_TRUE(Settled(router, Family::kCbc));
  EXPECT_EQ(router.afalg_state_so_far(Family::kCbc),
            router.afalg_state(Family::kCbc));
  EXPECT_FALSE(Settled(router, Family::kGcm)) << "only the request's family";
  // Settled off (no offload driver), the engines stop asking.
  if (!router.afalg_on(Family::kCbc)) {
    EXPECT_EQ(router.AfalgMinLen(Alg::kAes128Cbc), ~uint64_t{0});
  }
}

TEST(AfalgLazyProbe, AskingForTheStateProbes) {
  fallback::FallbackLibrary library;
  const route::Router router(AutoSettings(), &library);
  EXPECT_FALSE(router.route_description(Alg::kAes128Xts).empty());
  EXPECT_TRUE(Settled(router, Family::kXts));
  EXPECT_FALSE(router.afalg_state(Family::kCtr).starts_with(kNotProbed));
  EXPECT_TRUE(Settled(router, Family::kCtr));
  // A GCM context asks whether the length matters, which (with no
  // fallback_max_len) only the afalg path decides.
  ASSERT_EQ(router.settings().family(Family::kGcm).fallback_max_len, 0u);
  router.LengthMatters(Alg::kAes128Gcm);
  EXPECT_TRUE(Settled(router, Family::kGcm));

  // Through OpenSSL: the afalg.<family> parameters `aesmux info` shows.
  auto env = LoadAfalgEnv({});
  ASSERT_TRUE(env->loaded()) << env->error();
  const std::string state = env->ProviderParam("afalg.gcm");
  EXPECT_FALSE(state.empty());
  EXPECT_FALSE(state.starts_with(kNotProbed)) << state;
}

TEST(AfalgLazyProbe, ForceAndOffSettleAtLoad) {
  fallback::FallbackLibrary library;
  route::Settings settings = AutoSettings();
  settings.families[static_cast<size_t>(Family::kCbc)].afalg =
      route::AfalgPolicy::kForce;
  settings.families[static_cast<size_t>(Family::kEcb)].afalg =
      route::AfalgPolicy::kOff;
  const route::Router router(settings, &library);
  EXPECT_TRUE(Settled(router, Family::kCbc));
  EXPECT_EQ(router.afalg_state_so_far(Family::kEcb), "off (afalg = off)");
  EXPECT_FALSE(Settled(router, Family::kGcm));
}

// sshd's pre-authentication child may have entered a seccomp sandbox that
// kills for one socket() call: a child never probes under afalg_fork = off.
TEST(AfalgLazyProbe, AForkedChildDoesNotProbe) {
  fallback::FallbackLibrary library;
  const route::Router router(AutoSettings(), &library);
  const std::string result = RunInChild([&router] {
    if (router.Choose(Alg::kAes128Ctr, 1 << 20) == core::Path::kAfalg) {
      return 2;
    }
    const std::string state = router.afalg_state_so_far(Family::kCtr);
    if (state.find("not probed before this process was forked") ==
        std::string::npos) {
      std::fprintf(stderr, "afalg ctr: %s\n", state.c_str());
      return 3;
    }
    return 0;
  });
  EXPECT_EQ(result, "");
}

}  // namespace
}  // namespace aesmux::test
