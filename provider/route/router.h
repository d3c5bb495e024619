// The router: for each request, which path serves it.
//
// One Router per provider instance holds that instance's settings and its
// fallback library. Decisions depend on the algorithm, the request length,
// the settings, what the afalg probe found at init and the afalg path's
// health; every served request is counted in the statistics by the engine
// that ran it (block_engine.h, gcm_engine.h).
//
// Order of preference: afalg for requests of at least the family's
// afalg_min_len when the path is on for the family; then the fallback path
// for requests of at most fallback_max_len (or always, without kernels);
// then simd. A request the afalg path hands on goes to ChooseCpu().
#ifndef AESMUX_PROVIDER_ROUTE_ROUTER_H_
#define AESMUX_PROVIDER_ROUTE_ROUTER_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/router.h belongs to a layer above the one that includes it"
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "provider/fallback/fallback.h"
#include "provider/core/algorithm.h"
#include "provider/route/settings.h"

namespace aesmux::route {

class Router {
 public:
  // Probes the afalg path for the families whose policy is not off (once
  // per process while any instance lives: provider/afalg/afalg.h says what
  // that costs).
  Router(Settings settings, const fallback::FallbackLibrary *fallback);

  const Settings &settings() const { return settings_; }
  const kernels::Tier *tier() const { return settings_.tier; }
  const fallback::FallbackLibrary &fallback() const { return *fallback_; }

  // The path for a request of `len` bytes of `alg`. When the afalg path is
  // due but may not run now (a forked child, resting after failures), the
  // hand-off is counted and the CPU's path returned.
  Path Choose(Alg alg, uint64_t len) const;

  // The path when the afalg path is out of the question.
  Path ChooseCpu(Alg alg, uint64_t len) const {
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
    const Family family = Info(alg).family;
    return afalg_on(family) ||
           (settings_.tier != nullptr &&
            settings_.family(family).fallback_max_len != 0);
  }

  // The shortest request of `alg` that Choose() may send to the afalg path
  // (the largest value when the path is off): for engines that test it
  // before calling Choose().
  uint64_t AfalgMinLen(Alg alg) const {
    const std::optional<uint64_t> &min_len =
        afalg_min_len_[static_cast<size_t>(Info(alg).family)];
    return min_len.has_value() ? std::max<uint64_t>(*min_len, 1)
                               : ~uint64_t{0};
  }

  // Whether the afalg path serves `family` in this provider instance.
  bool afalg_on(Family family) const {
    return afalg_min_len_[static_cast<size_t>(family)].has_value();
  }
  // For people: whether and why the afalg path is on for `family`.
  const std::string &afalg_state(Family family) const {
    return afalg_state_[static_cast<size_t>(family)];
  }

  // For people: which paths serve `alg` at which lengths, as Choose() and
  // the engines decide ("fallback up to 64 B, simd (vaes_avx512) above; …").
  const std::string &route_description(Alg alg) const {
    return route_description_[static_cast<size_t>(alg)];
  }

 private:
  // Keeps the process-wide afalg::Service alive while this instance is.
  class AfalgServiceHold {
   public:
    AfalgServiceHold();
    ~AfalgServiceHold();
    AfalgServiceHold(const AfalgServiceHold &) = delete;
    AfalgServiceHold &operator=(const AfalgServiceHold &) = delete;
  };

  AfalgServiceHold afalg_service_;  // first: made first, released last
  Settings settings_;
  const fallback::FallbackLibrary *fallback_;
  // Per family: nullopt when the afalg path is off.
  std::array<std::optional<uint64_t>, kNumFamilies> afalg_min_len_{};
  std::array<std::string, kNumFamilies> afalg_state_{};
  std::array<std::string, kNumAlgs> route_description_{};

  std::string DescribeRoute(Alg alg) const;
};

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_ROUTER_H_
