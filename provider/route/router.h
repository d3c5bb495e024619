// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The router: for each request, which path serves it, and the statistics
// of what each path served.
//
// One Router per provider instance holds that instance's settings and its
// fallback library. Decisions depend on the algorithm, the request length,
// the direction, what the context has (a key on a kernel tier), the
// settings, what the afalg probe found (at load or on first use: the
// constructor says when) and the afalg path's health.
// This is the only code that compares a request's length with a threshold:
// block engines keep a BlockRoute (below), the router's rule for their
// algorithm and key reduced to a few numbers; GCM engines ask Choose().
// Engines run the path they are given and report back: the keys they set
// up (KeySet()), what they served (Served()) and what the afalg path handed
// on (HandedOff(), which names the next path); every request and key setup
// is counted there, and nowhere else.
//
// Order of preference: afalg for requests of at least the family's
// afalg_min_len when the path is on for the family; then the fallback path
// for requests of at most fallback_max_len (or always, without kernels, or
// without a key on them); then, for CBC encryptions of one segment from
// mb_min_len to mb_max_len bytes when there is a multi-buffer tier, mb if
// made in an ASYNC job or at least mb_threads_min_len bytes long, told to
// batch with other threads' only while more threads than CPUs make such
// requests and thread batching does not rest (BlockRoute::Choose; the
// batch layer runs such a request in lanes when concurrent requests come
// to batch with in time, else alone on the single-stream kernel, and says
// which); then simd. A request the afalg path hands on goes to
// ChooseCpu() (never to mb).
#ifndef AESMUX_PROVIDER_ROUTE_ROUTER_H_
#define AESMUX_PROVIDER_ROUTE_ROUTER_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/router.h belongs to a layer above the one that includes it"
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <new>
#include <optional>
#include <string>

#include "provider/core/algorithm.h"
#include "provider/core/process.h"
#include "provider/core/stats.h"
#include "provider/fallback/fallback.h"
#include "provider/route/settings.h"

namespace aesmux::route {

class BlockRoute;

class Router {
 public:
  // Settles the afalg path of each family: at once where the policy is off or
  // force (force probes here, so that a process is set up before it may enter
  // a sandbox); under auto, on the family's first request of at least its
  // afalg_min_len, or when afalg_on(), afalg_state(), route_description() or
  // LengthMatters() (a GCM context, with the default thresholds) asks, so that
  // loading costs no /proc/crypto read (BENCHMARKS.md, "What does loading
  // aesmux cost: start-up and memory?"). A probe runs once per process while
  // any instance lives (provider/afalg/afalg.h says what it costs); a forked
  // child probes only under afalg_fork = rebuild.
  Router(Settings settings, const fallback::FallbackLibrary *fallback);
  Router(const Router &) = delete;
  Router &operator=(const Router &) = delete;

  const Settings &settings() const { return settings_; }
  const kernels::Tier *tier() const { return settings_.tier; }
  const fallback::FallbackLibrary &fallback() const { return *fallback_; }

  // The path for a request of `len` bytes of `alg` (settling the afalg
  // path first when the request may go there). When the afalg path is
  // due but may not run now (a forked child, resting after failures), the
  // hand-off is counted and the CPU's path returned.
  Path Choose(Alg alg, uint64_t len) const;

  // The path when the afalg path is out of the question.
  Path ChooseCpu(Alg alg, uint64_t len) const {
    if (settings_.tier == nullptr) return Path::kFallback;
    const uint64_t max = settings_.family(Info(alg).family).fallback_max_len;
    return len <= max && max != 0 ? Path::kFallback : Path::kSimd;
  }

  // The router's rule for a block engine of `alg` (ECB, CBC, CTR, XTS)
  // whose key is (`key_on_tier`) or is not on the kernels: made when the
  // key is set.
  BlockRoute RouteBlocks(Alg alg, bool key_on_tier) const;

  // Whether Choose(alg, len) can differ between lengths: when it cannot,
  // a GCM message is routed as soon as it starts, without buffering AAD.
  // Where only the afalg path could make it differ, this settles it: a GCM
  // context made while it was not settled would route each message,
  // buffering its AAD: a cost on every record, where settling is one probe
  // per process (BENCHMARKS.md, "What does loading aesmux cost: start-up
  // and memory?"). If memory runs out while it settles, the length matters: the
  // afalg path settles on a later message.
  bool LengthMatters(Alg alg) const {
    const Family family = Info(alg).family;
    if (settings_.tier != nullptr &&
        settings_.family(family).fallback_max_len != 0) {
      return true;
    }
    if (!afalg_min_len_[static_cast<size_t>(family)].has_value()) return false;
    const AfalgFamily *state = SettledUnlessOutOfMemory(family);
    return state == nullptr ||
           (state->on && afalg_key_passed_[static_cast<size_t>(alg)]);
  }

  // Counts a key an engine of `alg` set up (schedule and tables made).
  static void KeySet(Alg alg) { core::CountKeySetup(alg); }
  // Counts a request of `len` bytes of `alg` that `path` served.
  [[gnu::always_inline]] static void Served(Alg alg, Path path, uint64_t len) {
    core::CountRequest(alg, path, len);
  }
  // Counts a request of `len` bytes that the afalg path handed on for
  // `reason`; returns the path to serve it instead.
  Path HandedOff(Alg alg, Handoff reason, uint64_t len) const {
    core::CountHandoff(alg, reason, len);
    return ChooseCpu(alg, len);
  }

  // The shortest request of `alg` that Choose() may send to the afalg path
  // (the largest value when the path is off): for engines that test it
  // before calling Choose(). Settles nothing.
  uint64_t AfalgMinLen(Alg alg) const {
    const auto f = static_cast<size_t>(Info(alg).family);
    const std::optional<uint64_t> &min_len = afalg_min_len_[f];
    const bool settled_off =
        afalg_[f].settled.load(std::memory_order_acquire) &&
        !afalg_key_passed_[static_cast<size_t>(alg)];
    if (!min_len.has_value() || settled_off) return ~uint64_t{0};
    return std::max<uint64_t>(*min_len, 1);
  }

  // Whether the afalg path serves `family` in this provider instance
  // (settling it; if memory runs out meanwhile, not for now: a later call
  // settles it).
  bool afalg_on(Family family) const {
    const AfalgFamily *state = SettledUnlessOutOfMemory(family);
    return state != nullptr && state->on;
  }
  // Whether it serves `alg`: its family, and keys of its size, which the
  // probe checked one by one (settling the family).
  bool AfalgServes(Alg alg) const {
    return afalg_on(Info(alg).family) &&
           afalg_key_passed_[static_cast<size_t>(alg)];
  }
  // For people: whether and why the afalg path is on for `family`
  // (settling it), as the probe found it.
  const std::string &afalg_state(Family family) const {
    return Settled(family).state;
  }
  // That, and what happened since in this process (the afalg path's
  // health: keys the driver refused, requests that failed and rests, the
  // driver gone): the afalg.<family> parameter, `aesmux info`.
  std::string afalg_report(Family family) const;
  // The report without settling the family: for the statistics file,
  // written at exit.
  std::string afalg_state_so_far(Family family) const;

  // For people: which paths serve `alg` at which lengths, as Choose() and
  // the engines decide ("fallback up to 64 B, simd (vaes_avx512) above; …"),
  // settling the afalg path of its family.
  const std::string &route_description(Alg alg) const {
    Settled(Info(alg).family);
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

  // The afalg path of one family, settled once under core::InitLock; `on`
  // and `state` are written before `settled` and never after.
  // (That lock, not a mutex of its own: fork() waits for it, so a child
  // never inherits a family half settled, or its lock held, by a thread it
  // does not have. Not a std::once_flag: settling may throw
  // std::bad_alloc, and an exception through glibc's pthread_once needs
  // libgcc_s loaded, which, when memory has run out, aborts the process.)
  struct AfalgFamily {
    std::atomic<bool> settled{false};
    bool on = false;
    std::string state;
  };

  // Settling allocates (the probe's findings, /proc/crypto's lines): it
  // throws std::bad_alloc if memory runs out, and leaves the family to
  // settle on a later call.
  const AfalgFamily &Settled(Family family) const {
    const AfalgFamily &state = afalg_[static_cast<size_t>(family)];
    if (!state.settled.load(std::memory_order_acquire)) Settle(family);
    return state;
  }
  // Settled(), for callers that may not throw (a context's constructor, a
  // request): null if memory ran out.
  const AfalgFamily *SettledUnlessOutOfMemory(Family family) const noexcept {
    try {
      return &Settled(family);
    } catch (const std::bad_alloc &) {
      return nullptr;
    }
  }
  void Settle(Family family) const;
  // What the probe says of `family` for its policy: `on`, `state`.
  void Probe(Family family, AfalgFamily *state) const;
  std::string DescribeRoute(Alg alg) const;

  AfalgServiceHold afalg_service_;  // first: made first, released last
  Settings settings_;
  const fallback::FallbackLibrary *fallback_;
  uint64_t load_generation_;  // core/process.h
  // Per family: the threshold the policy sets, nullopt when it is off.
  std::array<std::optional<uint64_t>, kNumFamilies> afalg_min_len_{};
  mutable std::array<AfalgFamily, kNumFamilies> afalg_{};
  // Per algorithm, written with its family's `on`: whether the probe's
  // known answer for its key size came out right.
  mutable std::array<bool, kNumAlgs> afalg_key_passed_{};
  // Written when the family's afalg path is settled.
  mutable std::array<std::string, kNumAlgs> route_description_{};
};

// A block engine's share of the router: the rule for its algorithm and key
// as five lengths, fixed when the key is set, so that choosing the path of
// a short request is a few comparisons inlined into the engine, and a
// request the afalg path cannot take never reaches Router::Choose().
class BlockRoute {
 public:
  BlockRoute(const Router &router, Alg alg) : router_(&router), alg_(alg) {}

  const Router &router() const { return *router_; }
  Alg alg() const { return alg_; }
  // The path for a request of `len` bytes in `direction`. `batchable`: the
  // request is one segment (a multi-buffer batch takes no more). `caller`
  // (batch::CallerProbe) answers, asked only of a CBC encryption in the mb
  // range (a request outside it asks nothing): whether it runs in an OpenSSL
  // ASYNC job (a call into libcrypto, a large part of a 16-byte CBC
  // encryption: BENCHMARKS.md, "How much do multi-buffer lanes and threads
  // gain?"); if not, and it is long enough for threads to batch, how many
  // other threads make such requests now, which counts it among them until the
  // mb path has served it (so it goes there, in lanes or alone). It batches
  // with them only when they outnumber the CPUs and thread batching does not
  // rest (recent requests waited for peers in vain or finished late). kAfalg
  // only when the afalg path admitted the request (Router::Choose).
  template <typename Caller>
  Path Choose(Direction direction, uint64_t len, bool batchable,
              Caller &caller) {
    if (len >= afalg_min_len_) [[unlikely]] {
      const Path path = router_->Choose(alg_, len);
      if (path == Path::kAfalg || !AfalgTurnedOff(len)) return path;
    }
    if (len < simd_min_len_) return Path::kFallback;
    if (len >= mb_min_len_ && len <= mb_max_len_ &&
        direction == Direction::kEncrypt && batchable) {
      if (caller.InAsyncJob()) return Path::kMb;
      if (len >= mb_threads_min_len_) {
        caller.set_batches(caller.OtherThreads() >= core::UsableCpus() &&
                           !caller.ThreadsRest(len));
        return Path::kMb;
      }
    }
    return Path::kSimd;
  }

  // Whether Choose() says simd for `len` bytes whatever the direction and
  // the caller: from simd_min_len_ up to, not including, afalg_min_len_ and
  // mb_min_len_. The engines ask this first, inline, so that a short
  // request's path costs two compares and no call.
  bool PlainSimd(uint64_t len) const {
    return len >= simd_min_len_ && len < std::min(afalg_min_len_, mb_min_len_);
  }

  // Whether the streams of a cipher pipeline (CBC encryption) go to the mb
  // path together, whatever their lengths: whenever there is a
  // multi-buffer tier, a pipeline being a batch already.
  bool BatchesPipes() const { return batches_; }

  void Served(Path path, uint64_t len) const {
    Router::Served(alg_, path, len);
  }
  Path HandedOff(Handoff reason, uint64_t len) const {
    return router_->HandedOff(alg_, reason, len);
  }

 private:
  friend class Router;
  // After Router::Choose() kept a request of `len` bytes off the afalg
  // path: the family's first such request may have settled the path off
  // (Router's constructor), and then the request, and every later one, is
  // routed by the lengths below (multi-buffer batching included) without
  // asking the router. True if that is so for `len`.
  bool AfalgTurnedOff(uint64_t len) {
    afalg_min_len_ = router_->AfalgMinLen(alg_);
    return len < afalg_min_len_;
  }

  const Router *router_ = nullptr;
  Alg alg_{};
  // Whether the key is on a kernel tier with a multi-buffer tier (CBC): in
  // alg_'s padding, not as a pointer to the tier, so that a keyed context
  // stays within the default provider's size (openssl/generic_ctx.cc).
  bool batches_ = false;
  // At least simd_min_len_ bytes: the kernels (the largest value when the
  // key is not on them); at least afalg_min_len_: ask Router::Choose(); from
  // mb_min_len_ to mb_max_len_ (CBC encryption only): mb, in lanes of
  // the key's tier, in an ASYNC job, or from mb_threads_min_len_ also outside.
  uint64_t simd_min_len_ = ~uint64_t{0};
  uint64_t afalg_min_len_ = ~uint64_t{0};
  uint64_t mb_min_len_ = ~uint64_t{0};
  uint64_t mb_max_len_ = 0;
  uint64_t mb_threads_min_len_ = ~uint64_t{0};
};

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_ROUTER_H_
