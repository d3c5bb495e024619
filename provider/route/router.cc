#include "provider/route/router.h"

#include "provider/afalg/afalg.h"
#include "provider/afalg/fd_budget.h"
#include "provider/afalg/process.h"
#include "provider/core/stats.h"

namespace aesmux::route {

Router::AfalgServiceHold::AfalgServiceHold() { afalg::Service::Acquire(); }
Router::AfalgServiceHold::~AfalgServiceHold() { afalg::Service::Release(); }

Router::Router(Settings settings, const fallback::FallbackLibrary *fallback)
    : settings_(std::move(settings)), fallback_(fallback) {
  afalg::Service &service = afalg::Service::Get();
  if (settings_.afalg_fork_rebuild) afalg::SetForkRebuild(true);
  afalg::ConfigureFdBudget(settings_.afalg_max_fds);
  for (size_t f = 0; f < kNumFamilies; ++f) {
    const auto family = static_cast<Family>(f);
    const FamilySettings &config = settings_.families[f];
    const std::string policy(AfalgPolicyName(config.afalg));
    if (config.afalg == AfalgPolicy::kOff) {
      afalg_state_[f] = "off (afalg = off)";
      continue;
    }
    const bool force = config.afalg == AfalgPolicy::kForce;
    service.Probe(family, force);
    const afalg::FamilyStatus status = service.status(family);
    if (!status.Usable(force)) {
      afalg_state_[f] = "off (" + policy + "): " +
                        (status.available ? "driver " + status.driver +
                                                " is CPU software"
                                          : status.reason);
      continue;
    }
    const uint64_t min_len = config.afalg_min_len.value_or(
        force ? 0 : settings_.auto_afalg_min_len);
    afalg_min_len_[f] = min_len;
    afalg_state_[f] = "on (" + policy + ") from " + std::to_string(min_len) +
                      " bytes: " + status.Describe();
  }
  for (const AlgInfo &info : kAlgs) {
    route_description_[static_cast<size_t>(info.alg)] = DescribeRoute(info.alg);
  }
}

Path Router::Choose(Alg alg, uint64_t len) const {
  const std::optional<uint64_t> &min_len =
      afalg_min_len_[static_cast<size_t>(Info(alg).family)];
  if (min_len.has_value() && len >= *min_len && len != 0) {
    const std::optional<Handoff> refused = afalg::Service::Get().Admit(alg);
    if (!refused.has_value()) return Path::kAfalg;
    CountHandoff(alg, *refused, len);
  }
  return ChooseCpu(alg, len);
}

BlockRoute Router::RouteBlocks(Alg alg, bool key_on_tier) const {
  BlockRoute route(*this, alg);
  route.afalg_min_len_ = AfalgMinLen(alg);
  const Family family = Info(alg).family;
  const FamilySettings &config = settings_.family(family);
  if (settings_.tier == nullptr || !key_on_tier) return route;
  const uint64_t max = config.fallback_max_len;
  route.simd_min_len_ = max == 0 ? 0 : max == ~uint64_t{0} ? max : max + 1;
  if (family != Family::kCbc || settings_.mb_tier == nullptr) return route;
  route.mb_tier_ = settings_.mb_tier;
  if (config.mb_max_len != 0) {
    // A batch of nothing is no batch: from one byte at least.
    route.mb_min_len_ = std::max<uint64_t>(config.mb_min_len, 1);
    route.mb_max_len_ = config.mb_max_len;
  }
  return route;
}

std::string Router::DescribeRoute(Alg alg) const {
  const Family family = Info(alg).family;
  const FamilySettings &config = settings_.family(family);
  std::string text;
  if (settings_.tier == nullptr) {
    text = "fallback at every length (" + settings_.tier_reason + ")";
  } else {
    const std::string simd = "simd (" + std::string(settings_.tier->name) + ")";
    text = config.fallback_max_len == 0
               ? simd + " at every length"
               : "fallback up to " + std::to_string(config.fallback_max_len) +
                     " B, " + simd + " above";
    if (config.mb_max_len != 0 && settings_.mb_tier != nullptr) {
      text += "; encryption " +
              (config.mb_min_len > 1
                   ? "from " + std::to_string(config.mb_min_len) + " B "
                   : std::string()) +
              "up to " + std::to_string(config.mb_max_len) +
              " B in multi-buffer lanes (mb, " +
              std::string(settings_.mb_tier->name) + ", up to " +
              std::to_string(settings_.mb_tier->lanes) +
              " lanes) when concurrent requests are there to batch with";
    }
  }
  if (afalg_on(family)) {
    text += "; afalg from " + std::to_string(AfalgMinLen(alg)) + " B";
  }
  return text;
}

}  // namespace aesmux::route
