// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The thread combiner's shards (internal/shard.h): publishing a request,
// waiting for it within its deadline, combining, withdrawing.
#include "provider/batch/internal/shard.h"

#include <openssl/crypto.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <span>

#include "provider/batch/internal/lanes.h"

namespace aesmux::batch::internal {
namespace {

using kernels::mb::CbcJob;

// The most requests one batch takes: the widest tier's lanes. More would
// make the batch's own requests wait for a second round of the kernel.
constexpr size_t kMaxBatch = 16;

// A caller waits for peers for its request's solo time and this long: a
// few turns of the scheduler, for the threads just served to come back
// with their next request.
constexpr uint64_t kPeerSlackNs = 25000;

// A request a combiner took has this many times its solo time past its
// caller's deadline before the caller withdraws it: a batch of the widest
// kernel takes about one request's solo time (it runs one block of every
// lane per step of the chain of one).
constexpr uint64_t kWithdrawAfterSolos = 2;

// A batched request finishes late, past its latency budget, when it took
// more than twice its solo tail time plus this long from its publication
// to its result: the promise is that a request's 99th-percentile latency
// stays within twice its solo one plus 50 us for the whole call, of which
// copying, waking and returning take some.
constexpr uint64_t kLatencyBudgetSolos = 2;
constexpr uint64_t kLatencySlackNs = 40000;

constinit std::atomic<CombineHook> g_combine_hook{nullptr};

}  // namespace

namespace {

uint64_t ToNanos(const timespec &time) {
  return static_cast<uint64_t>(time.tv_sec) * 1000000000u +
         static_cast<uint64_t>(time.tv_nsec);
}

}  // namespace

uint64_t NowNanos() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return ToNanos(now);
}

uint64_t ProcessCpuNanos() {
  timespec used;
  return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used) == 0 ? ToNanos(used)
                                                              : 0;
}

void SetCombineHookForTesting(CombineHook hook) {
  g_combine_hook.store(hook, std::memory_order_release);
}

// ---------------------------------------------------------------------------
// SoloTime: picoseconds per byte per round of key, learnt from timed runs.

namespace {

// The first this many requests run alone and are timed; the estimate is
// their fastest. After that one request in kSampleEvery runs alone (one in
// kRestingSampleEvery while batching rests, when all run alone anyway),
// and moves the estimate by an eighth of the way (a sample at most twice
// the estimate: a run the scheduler interrupted says little about the
// usual time).
constexpr uint32_t kFirstSamples = 4;
constexpr uint32_t kSampleEvery = 1024;
constexpr uint32_t kRestingSampleEvery = 32;

// The tail estimate is the kTailRank-th slowest of the last
// kRecentSamples samples taken while batching rested (their 99th
// percentile), at most kMaxTailSolos times the usual time (a run that a
// long preemption stretched says little).
constexpr size_t kRecentSamples = 256;
constexpr size_t kTailRank = 3;
constexpr uint64_t kMaxTailSolos = 4;

constinit std::atomic<uint32_t> g_solo_ps{0};
constinit std::atomic<uint32_t> g_solo_tail_ps{0};
constinit std::atomic<uint32_t> g_solo_samples{0};
constinit std::atomic<uint32_t> g_solo_requests{0};
constinit std::atomic<uint32_t> g_solo_recent_next{0};
constinit std::array<std::atomic<uint32_t>, kRecentSamples> g_solo_recent{};

}  // namespace

bool SoloTime::WantSample(bool resting) {
  if (g_solo_samples.load(std::memory_order_relaxed) < kFirstSamples) {
    return true;
  }
  return g_solo_requests.fetch_add(1, std::memory_order_relaxed) %
             (resting ? kRestingSampleEvery : kSampleEvery) ==
         0;
}

uint64_t SoloTime::Nanos(size_t len, uint32_t rounds) {
  return uint64_t{g_solo_ps.load(std::memory_order_relaxed)} * len * rounds /
         1000;
}

uint64_t SoloTime::TailNanos(size_t len, uint32_t rounds) {
  const uint64_t usual = g_solo_ps.load(std::memory_order_relaxed);
  const uint64_t tail = std::clamp<uint64_t>(
      g_solo_tail_ps.load(std::memory_order_relaxed), usual,
      kMaxTailSolos * usual);
  return tail * len * rounds / 1000;
}

namespace {

void Learn(uint64_t nanos, size_t len, uint32_t rounds, bool resting) {
  if (len == 0) return;
  const uint64_t sample = std::clamp<uint64_t>(
      nanos * 1000 / (uint64_t{len} * rounds), 1, UINT32_MAX);
  const uint32_t seen = g_solo_samples.fetch_add(1, std::memory_order_relaxed);
  if (resting) {
    const uint32_t index = g_solo_recent_next.fetch_add(
        1, std::memory_order_relaxed);
    g_solo_recent[index % kRecentSamples].store(
        static_cast<uint32_t>(sample), std::memory_order_relaxed);
    std::array<uint32_t, kTailRank> slowest{};  // descending
    for (const std::atomic<uint32_t> &recent : g_solo_recent) {
      uint32_t value = recent.load(std::memory_order_relaxed);
      for (uint32_t &rank : slowest) {
        if (value > rank) std::swap(value, rank);
      }
    }
    g_solo_tail_ps.store(slowest.back(), std::memory_order_relaxed);
  }
  uint32_t old = g_solo_ps.load(std::memory_order_relaxed);
  uint32_t next;
  do {
    if (old == 0) {
      next = static_cast<uint32_t>(sample);
    } else if (seen < kFirstSamples) {
      next = static_cast<uint32_t>(std::min<uint64_t>(old, sample));
    } else {
      next = static_cast<uint32_t>(
          (7 * uint64_t{old} + std::min<uint64_t>(sample, 2 * uint64_t{old})) /
          8);
    }
  } while (!g_solo_ps.compare_exchange_weak(old, next,
                                            std::memory_order_relaxed));
}

}  // namespace

void SoloTime::RunAndLearn(const kernels::Tier &tier,
                           const CbcRequest &request, bool resting) {
  const uint64_t start = NowNanos();
  RunAlone(tier, request);
  Learn(NowNanos() - start, request.len, request.key->rounds, resting);
}

// ---------------------------------------------------------------------------
// Slot

Slot::~Slot() {
  Wipe(true);
  std::free(data);
}

bool Slot::Reserve(size_t bytes) {
  if (bytes <= capacity) return true;
  // Whole cache lines, and room to grow a little without reallocating.
  const size_t size = (std::max(bytes, 2 * capacity) + 63) & ~size_t{63};
  void *fresh = std::aligned_alloc(64, size);
  if (fresh == nullptr) return false;
  if (data != nullptr) {
    OPENSSL_cleanse(data, capacity);
    std::free(data);
  }
  data = static_cast<uint8_t *>(fresh);
  capacity = size;
  return true;
}

void Slot::Wipe(bool whole) {
  OPENSSL_cleanse(&key, sizeof(key));
  OPENSSL_cleanse(iv, sizeof(iv));
  if (whole && data != nullptr) OPENSSL_cleanse(data, capacity);
}

// ---------------------------------------------------------------------------
// Shard

Shard::~Shard() {
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;) {
    Slot *next = slot->next;
    delete slot;
    slot = next;
  }
}

bool Shard::Idle() const {
  if (threads_.load(std::memory_order_acquire) != 0) return false;
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;
       slot = slot->next) {
    if (slot->in_use.load(std::memory_order_acquire)) return false;
  }
  return true;
}

Slot *Shard::Reuse() {
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;
       slot = slot->next) {
    bool free = false;
    if (slot->in_use.compare_exchange_strong(free, true,
                                             std::memory_order_acquire)) {
      return slot;
    }
  }
  return nullptr;
}

Slot *Shard::Add() {
  // Lives as long as the shard: others scan it.
  auto *slot = new (std::nothrow) Slot;
  if (slot == nullptr) return nullptr;
  slot->next = slots_.load(std::memory_order_relaxed);
  while (!slots_.compare_exchange_weak(slot->next, slot,
                                       std::memory_order_release,
                                       std::memory_order_relaxed)) {
  }
  return slot;
}

void Shard::Release(Slot &slot) {
  slot.in_use.store(false, std::memory_order_release);
}

bool Shard::Take(Slot &slot) {
  uint32_t published = kPublished;
  if (!slot.state.compare_exchange_strong(published, kTaken,
                                          std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
    return false;
  }
  pending_.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

uint32_t Shard::Quorum(const kernels::Tier &tier) const {
  const uint32_t cap = static_cast<uint32_t>(std::min<size_t>(
      {tier.mb.lanes, kMaxBatch,
       std::max<uint32_t>(threads_.load(std::memory_order_relaxed), 1)}));
  const uint32_t quorum = quorum_.load(std::memory_order_relaxed);
  return quorum == 0 ? cap : std::min(quorum, cap);
}

void Shard::Wait() {
  // The CPU to the next thread that can run: with more threads than CPUs
  // (the router sends nothing here otherwise) and the threads of a shard
  // on one CPU, often a peer coming back with its next request. Sleeping
  // on a futex instead costs a system call to sleep and one to wake, and
  // in a VM an interrupt to another CPU when the scheduler moves a thread
  // (27-37 us on the machine of BENCHMARKS.md): the batches of 16 threads
  // of 16 KiB on 2 CPUs then gained 1.05x where yielding gains 2x. A yield
  // behind a thread that does not yield (another process, or threads that
  // run their requests alone) waits out that thread's time slice, which
  // makes its caller late and rests batching (combiner.cc).
  sched_yield();
}

bool Shard::Adapt(const kernels::Tier &tier, bool reached, size_t taken) {
  if (reached) {
    // Try one more next time: more lanes per kernel call, and fewer calls
    // for the scheduler's round of the waiting threads to wait for.
    quorum_.store(Quorum(tier) + 1, std::memory_order_relaxed);
    return true;
  }
  // The deadline came first: what came by then is the batch to wait for.
  quorum_.store(static_cast<uint32_t>(std::max<size_t>(taken, 2)),
                std::memory_order_relaxed);
  return taken > 1;
}

Ran Shard::Run(const kernels::Tier &tier, const CbcRequest &request,
               Slot *&mine, uint32_t in_flight, uint32_t cpus,
               Verdict *verdict) {
  *verdict = Verdict::kNone;
  const uint32_t rounds = request.key->rounds;
  if (threads_.load(std::memory_order_relaxed) <= 1) {
    // Nobody else's requests come to this CPU's shard.
    RunAlone(tier, request);
    return Ran::kAlone;
  }
  if (SoloTime::WantSample(/*resting=*/false) || !mine->Reserve(request.len)) {
    SoloTime::RunAndLearn(tier, request, /*resting=*/false);
    return Ran::kAlone;
  }
  Slot &slot = *mine;
  slot.key = *request.key;
  std::memcpy(slot.iv, request.iv, sizeof(slot.iv));
  std::memcpy(slot.data, request.in, request.len);
  slot.len = request.len;
  const uint64_t solo = SoloTime::Nanos(request.len, rounds);
  const uint64_t published = NowNanos();
  const uint64_t deadline = published + solo + kPeerSlackNs;
  const uint64_t withdraw_at = deadline + kWithdrawAfterSolos * solo;
  slot.state.store(kPublished, std::memory_order_release);
  pending_.fetch_add(1, std::memory_order_acq_rel);

  bool batched = true;  // with others (not alone after waiting)
  for (uint64_t now = published;;) {
    const uint32_t state = slot.state.load(std::memory_order_acquire);
    if (state == kDone) break;
    if (state == kPublished) {
      const bool reached =
          pending_.load(std::memory_order_acquire) >= Quorum(tier);
      if (reached || now >= deadline) {
        if (!Take(slot)) continue;  // a combiner took it first
        size_t taken = 0;
        slot.ran = Combine(tier, slot, &taken);
        batched = Adapt(tier, reached, taken);
        break;
      }
      Wait();
    } else if (state == kTaken) {
      if (now >= withdraw_at) {
        uint32_t taken = kTaken;
        if (slot.state.compare_exchange_strong(taken, kAbandoned,
                                               std::memory_order_acq_rel)) {
          // The combiner frees the slot; we never touch it again.
          mine = nullptr;
          *verdict = Verdict::kVain;
          RunAlone(tier, request);
          return Ran::kAlone;
        }
        continue;  // done meanwhile
      }
      Wait();
    }
    now = NowNanos();
  }
  const uint64_t took = NowNanos() - published;
  // Alone, each of the threads in flight would have had its share of the
  // CPUs for its request: batching that usually takes longer loses
  // throughput.
  const uint64_t fair_share =
      solo * std::max(in_flight, cpus) / std::max(cpus, 1u);
  if (!batched) {
    *verdict = Verdict::kVain;
  } else if (took > kLatencyBudgetSolos * SoloTime::TailNanos(request.len,
                                                               rounds) +
                        kLatencySlackNs) {
    *verdict = Verdict::kLate;
  } else if (took > fair_share) {
    *verdict = Verdict::kOverShare;
  } else {
    *verdict = Verdict::kOnTime;
  }
  std::memcpy(request.out, slot.data, request.len);
  std::memcpy(request.iv, slot.iv, sizeof(slot.iv));
  slot.Wipe(false);
  slot.state.store(kIdle, std::memory_order_relaxed);
  return slot.ran;
}

Ran Shard::Combine(const kernels::Tier &tier, Slot &mine, size_t *taken) {
  std::array<Slot *, kMaxBatch> batch;
  size_t count = 0;
  batch[count++] = &mine;
  const size_t limit = std::min(tier.mb.lanes, kMaxBatch);
  for (Slot *slot = slots_.load(std::memory_order_acquire);
       slot != nullptr && count < limit; slot = slot->next) {
    if (slot != &mine && Take(*slot)) batch[count++] = slot;
  }
  *taken = count;
  if (CombineHook hook = g_combine_hook.load(std::memory_order_acquire)) {
    hook(count);
  }
  std::array<CbcJob, kMaxBatch> jobs;
  for (size_t i = 0; i < count; ++i) {
    Slot &slot = *batch[i];
    jobs[i] = {&slot.key, slot.iv, slot.data, slot.data, slot.len};
  }
  bool in_lanes = false;
  if (count > 1) {
    if (const QueueRef queue = ThisThreadQueue()) {
      std::lock_guard lock(queue->mutex);
      in_lanes = RunInLanes(queue->managers, tier, std::span(jobs.data(), count));
    }
  }
  if (!in_lanes) {
    for (size_t i = 0; i < count; ++i) {
      Slot &slot = *batch[i];
      tier.ops.cbc_encrypt(&slot.key, slot.iv, slot.data, slot.data, slot.len);
    }
  }
  const Ran ran = in_lanes ? Ran::kInLanes : Ran::kAlone;
  // Hand the results back; a request withdrawn meanwhile leaves its slot
  // to us to free.
  for (size_t i = 1; i < count; ++i) {
    Slot &slot = *batch[i];
    slot.ran = ran;
    uint32_t state = kTaken;
    if (!slot.state.compare_exchange_strong(state, kDone,
                                            std::memory_order_acq_rel)) {
      slot.Wipe(true);
      slot.state.store(kIdle, std::memory_order_relaxed);
      slot.in_use.store(false, std::memory_order_release);
    }
  }
  return ran;
}

}  // namespace aesmux::batch::internal
