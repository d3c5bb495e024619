// The router: for each request, which path serves it.
//
// One Router per provider instance holds that instance's settings and its
// fallback library. Decisions depend only on the algorithm, the request
// length and the settings (later also on path health and async context);
// every served request is counted in the statistics by the engine that ran
// it (block_engine.h, gcm_engine.h).
#ifndef AESMUX_PROVIDER_ROUTE_ROUTER_H_
#define AESMUX_PROVIDER_ROUTE_ROUTER_H_

#include <cstdint>

#include "provider/fallback/fallback.h"
#include "provider/route/algorithm.h"
#include "provider/route/settings.h"

namespace aesmux::route {

class Router {
 public:
  Router(Settings settings, const fallback::FallbackLibrary *fallback)
      : settings_(std::move(settings)), fallback_(fallback) {}

  const Settings &settings() const { return settings_; }
  const kernels::Tier *tier() const { return settings_.tier; }
  const fallback::FallbackLibrary &fallback() const { return *fallback_; }

  // The path for a request of `len` bytes of `alg`.
  Path Choose(Alg alg, uint64_t len) const {
    if (settings_.tier == nullptr) return Path::kFallback;
    const uint64_t max = settings_.family(Info(alg).family).fallback_max_len;
    return len <= max && max != 0 ? Path::kFallback : Path::kSimd;
  }

  // The shortest request Choose() sends to the kernels for `alg` (never,
  // when there is no tier): for engines that precompute the decision.
  uint64_t SimdMinLen(Alg alg) const {
    if (settings_.tier == nullptr) return ~uint64_t{0};
    const uint64_t max = settings_.family(Info(alg).family).fallback_max_len;
    if (max == 0) return 0;
    return max == ~uint64_t{0} ? max : max + 1;
  }

  // Whether Choose(alg, len) can differ between lengths: when it cannot,
  // a GCM message is routed as soon as it starts, without buffering AAD.
  bool LengthMatters(Alg alg) const {
    return settings_.tier != nullptr &&
           settings_.family(Info(alg).family).fallback_max_len != 0;
  }

 private:
  Settings settings_;
  const fallback::FallbackLibrary *fallback_;
};

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_ROUTER_H_
