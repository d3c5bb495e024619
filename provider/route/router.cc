// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/route/router.h"

#include "provider/afalg/afalg.h"
#include "provider/afalg/fd_budget.h"
#include "provider/afalg/process.h"
#include "provider/core/process.h"
#include "provider/core/stats.h"

namespace aesmux::route {

Router::AfalgServiceHold::AfalgServiceHold() { afalg::Service::Acquire(); }
Router::AfalgServiceHold::~AfalgServiceHold() { afalg::Service::Release(); }

Router::Router(Settings settings, const fallback::FallbackLibrary *fallback)
    : settings_(std::move(settings)),
      fallback_(fallback),
      load_generation_(core::ProcessGeneration()) {
  afalg::ConfigureFdBudget(settings_.afalg_max_fds);
  for (size_t f = 0; f < kNumFamilies; ++f) {
    const FamilySettings &config = settings_.families[f];
    if (config.afalg == AfalgPolicy::kOff) continue;
    afalg_min_len_[f] = config.afalg_min_len.value_or(
        config.afalg == AfalgPolicy::kForce ? 0 : settings_.auto_afalg_min_len);
  }
  for (size_t f = 0; f < kNumFamilies; ++f) {
    if (settings_.families[f].afalg != AfalgPolicy::kAuto) {
      Settle(static_cast<Family>(f));
    }
  }
}

void Router::Settle(Family family) const {
  AfalgFamily &state = afalg_[static_cast<size_t>(family)];
  core::InitLock lock;
  if (state.settled.load(std::memory_order_relaxed)) return;
  Probe(family, &state);
  for (const AlgInfo &info : kAlgs) {
    if (info.family == family) {
      route_description_[static_cast<size_t>(info.alg)] =
          DescribeRoute(info.alg);
    }
  }
  state.settled.store(true, std::memory_order_release);
}

void Router::Probe(Family family, AfalgFamily *state) const {
  const FamilySettings &config = settings_.family(family);
  const std::string policy(AfalgPolicyName(config.afalg));
  if (config.afalg == AfalgPolicy::kOff) {
    state->state = "off (afalg = off)";
    return;
  }
  // The parent settled what it meant to use before the fork; a child that
  // may not build its own sockets must not probe either (a sandbox may
  // kill it for one socket() call: provider/afalg/process.h).
  if (core::ProcessGeneration() != load_generation_ &&
      !settings_.afalg_fork_rebuild) {
    state->state = "off (" + policy +
                   "): not probed before this process was forked "
                   "(afalg_fork = off)";
    return;
  }
  const bool force = config.afalg == AfalgPolicy::kForce;
  afalg::Service &service = afalg::Service::Get();
  service.Probe(family, force);
  const afalg::FamilyStatus status = service.status(family);
  if (!status.Usable(force)) {
    state->state = "off (" + policy + "): " +
                   (status.available
                        ? "driver " + status.driver + " is CPU software"
                        : status.reason);
    return;
  }
  state->on = true;
  for (const AlgInfo &info : kAlgs) {
    if (info.family == family) {
      afalg_key_passed_[static_cast<size_t>(info.alg)] =
          status.KeyUsable(info.key_len);
    }
  }
  state->state = "on (" + policy + ") from " +
                 std::to_string(*afalg_min_len_[static_cast<size_t>(family)]) +
                 " bytes: " + status.Describe();
}

std::string Router::afalg_report(Family family) const {
  const std::string health = afalg::Service::Get().Health(family);
  return afalg_state(family) + (health.empty() ? "" : "; since: " + health);
}

std::string Router::afalg_state_so_far(Family family) const {
  const AfalgFamily &state = afalg_[static_cast<size_t>(family)];
  if (state.settled.load(std::memory_order_acquire)) {
    return afalg_report(family);
  }
  return "auto, not probed: no request of at least " +
         std::to_string(*afalg_min_len_[static_cast<size_t>(family)]) +
         " bytes";
}

Path Router::Choose(Alg alg, uint64_t len) const {
  if (len >= AfalgMinLen(alg) && AfalgServes(alg)) {
    const std::optional<Handoff> refused = afalg::Service::Get().Admit(
        alg, settings_.afalg_fork_rebuild);
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
  if (family != Family::kCbc || settings_.tier->mb.lanes == 0) return route;
  route.batches_ = true;
  if (config.mb_max_len != 0) {
    // A batch of nothing is no batch: from one byte at least.
    route.mb_min_len_ = std::max<uint64_t>(config.mb_min_len, 1);
    route.mb_max_len_ = config.mb_max_len;
    route.mb_threads_min_len_ = config.mb_threads_min_len;
  }
  return route;
}

namespace {

// Which lengths of the mb range threads beyond the CPUs batch, as the tail
// of DescribeRoute()'s sentence.
std::string DescribeThreadBatching(const FamilySettings &config) {
  if (config.mb_threads_min_len > config.mb_max_len) {
    return " (not those of threads: mb_threads_min_len is above "
           "mb_max_len)";
  }
  const bool whole_range =
      config.mb_threads_min_len <= std::max<uint64_t>(config.mb_min_len, 1);
  return ", and " +
         (whole_range ? std::string()
                      : "from " + std::to_string(config.mb_threads_min_len) +
                            " B ") +
         "those of threads beyond the CPUs";
}

}  // namespace

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
    if (config.mb_max_len != 0 && settings_.tier->mb.lanes != 0) {
      text += "; encryption " +
              (config.mb_min_len > 1
                   ? "from " + std::to_string(config.mb_min_len) + " B "
                   : std::string()) +
              "up to " + std::to_string(config.mb_max_len) +
              " B in multi-buffer lanes (mb, " +
              std::string(settings_.tier->name) + ", up to " +
              std::to_string(settings_.tier->mb.lanes) +
              " lanes) when concurrent requests are there to batch with: "
              "those of ASYNC jobs" +
              DescribeThreadBatching(config);
    }
  }
  // Called while the family settles: its state, not afalg_on().
  if (afalg_[static_cast<size_t>(family)].on) {
    text += afalg_key_passed_[static_cast<size_t>(alg)]
                ? "; afalg from " + std::to_string(AfalgMinLen(alg)) + " B"
                : "; not afalg: its driver failed the probe for " +
                      std::to_string(Info(alg).key_len) + "-byte keys";
  }
  return text;
}

}  // namespace aesmux::route
