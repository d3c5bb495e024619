// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// One shard of the thread combiner (combiner.cc): a group of threads that
// publish CBC encryptions into their slots, and the protocol by which one
// of them runs the published ones together. Which shard a thread uses, and
// whether a request comes here at all (the router's decision), are not
// this file's business.
//
// The protocol, made so that batching never loses much to running alone:
// - A caller copies its request (key schedule, chaining value, data) into
//   its slot's staging before it publishes it, and copies the result back
//   itself. The thread that combines reads and writes staging only, never
//   a caller's buffers or key, so a caller may take its request back at
//   any moment, and nothing touches its memory after its call returns.
// - The caller whose publication brings the shard's pending requests to
//   its quorum takes them (up to the tier's lanes) and runs them at once in
//   its own thread's lanes; no lock is held across a batch, and a combiner
//   never gives the CPU away while it holds others' requests. The others
//   give the CPU away (sched_yield) and look again until their request is
//   done or their deadline passes.
// - A caller's deadline is the time its request takes alone (SoloTime,
//   measured here) plus kPeerSlackNs. A caller whose request nobody has
//   taken by then takes what is pending, its own included, and runs it
//   (alone if nobody came); the quorum shrinks to what came, and grows by
//   one with each batch that reaches it. A caller whose request a combiner
//   took but has not finished by a second deadline withdraws it and runs
//   it alone from its own buffers; the combiner drops that result and
//   frees the slot. So a descheduled, stopped or preempted combiner delays
//   only the requests it took, and those only until their deadlines.
// - A batched request is late when it took longer than its latency budget:
//   twice the time a request of its length takes alone in its slower runs
//   (SoloTime's tail, what the promise is measured against) plus a fixed
//   slack. It is over its share when it took longer than it would have
//   taken alone on its share of the CPUs (its usual solo time, times the
//   threads in flight over the CPUs): a batch can form well within the
//   budget and still lose, when the threads whose requests it holds yield
//   their CPUs to each other while one combines.
// - Each request's verdict (on time, over its share, late, in vain) goes
//   to combiner.cc, which rests batching when it keeps failing.
//
// Private to provider/batch/. Nothing here throws.
#ifndef AESMUX_PROVIDER_BATCH_INTERNAL_SHARD_H_
#define AESMUX_PROVIDER_BATCH_INTERNAL_SHARD_H_

// Layers (DEVELOPERS.md): only what links aesmux_batch includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_batch)
#error "provider/batch/internal/shard.h belongs to a layer above the one that includes it"
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/tiers.h"
#include "provider/batch/cbc_batch.h"

namespace aesmux::batch::internal {

// A thread's publication slot and its staging. States:
enum SlotState : uint32_t {
  kIdle,       // its thread's: nothing published
  kPublished,  // a request waits for a combiner
  kTaken,      // a combiner runs it
  kDone,       // served: the result is in staging
  kAbandoned,  // its thread withdrew it from a combiner, which frees it
};

// What one request tells of batching threads (combiner.cc rests batching
// on it).
enum class Verdict : uint8_t {
  kNone,       // it did not wait to batch (it ran alone to be timed)
  kOnTime,     // batched within its latency budget and its share
  kOverShare,  // batched within its latency budget, past its share of
               // the CPUs
  kLate,       // batched, past its latency budget
  kVain,       // it waited for peers in vain: nobody came by its deadline,
               // or it withdrew from a stalled combiner
};

struct Slot {
  Slot() = default;
  Slot(const Slot &) = delete;
  Slot &operator=(const Slot &) = delete;
  ~Slot();

  // Room for `len` bytes of staging; false if there is no memory for it.
  bool Reserve(size_t len);
  // Wipes what the last request left: its key schedule and chaining
  // value, and with `whole` its data (once it completed, staging holds
  // only ciphertext).
  void Wipe(bool whole);

  std::atomic<uint32_t> state{kIdle};
  // Held by a thread's lease, or abandoned and not yet freed.
  std::atomic<bool> in_use{true};
  Slot *next = nullptr;  // immutable once linked
  // Staging: written by the owner while kIdle, by a combiner while kTaken,
  // read by the owner once kDone.
  aesmux_aes_key key{};
  alignas(16) uint8_t iv[16]{};
  uint8_t *data = nullptr;
  size_t capacity = 0;
  size_t len = 0;
  Ran ran = Ran::kAlone;  // how the combiner ran it, once kDone
};

// One group of threads that batch together: the Combiner keeps one shard
// per CPU, for the threads running there.
class Shard {
 public:
  Shard() = default;
  Shard(const Shard &) = delete;
  Shard &operator=(const Shard &) = delete;
  ~Shard();

  // No thread has joined it or holds a slot (nor has abandoned one a
  // combiner still has).
  bool Idle() const;

  // A free slot of this shard for the calling thread, or nullptr.
  Slot *Reuse();
  // A new slot for the calling thread; null if there is no memory for it.
  Slot *Add();
  // Gives back a slot of Reuse() or Add() (not withdrawn) for reuse.
  void Release(Slot &slot);

  // Counts a thread whose requests come here now (its CPU's shard), until
  // it leaves for another shard or exits: how many requests a batch can
  // expect. A thread counted keeps the shard from being Idle(); its
  // Leave() may be its last touch of the shard before it is freed, so it
  // releases what the thread did before to the Idle() that sees it.
  void Join() { threads_.fetch_add(1, std::memory_order_relaxed); }
  void Leave() { threads_.fetch_sub(1, std::memory_order_release); }

  // Runs `request` through `mine`, the calling thread's slot: in a batch
  // of this shard's requests when others come in time, else alone.
  // `in_flight`: the threads encrypting now (the caller included), which
  // share `cpus` CPUs.
  // `*mine` becomes null if the request was withdrawn from a combiner
  // (the slot is then the combiner's to free): the caller needs another
  // slot for its next request.
  Ran Run(const kernels::Tier &tier, const CbcRequest &request, Slot *&mine,
          uint32_t in_flight, uint32_t cpus, Verdict *verdict);

 private:
  // Takes `mine` (already kTaken by the caller) and up to a batch's worth
  // of other pending requests, runs them, and hands the others their
  // results. Returns how `mine` ran; `*taken`: the batch's size.
  Ran Combine(const kernels::Tier &tier, Slot &mine, size_t *taken);
  // Gives the CPU away while a request waits.
  static void Wait();
  // Claims a published request for a combiner.
  bool Take(Slot &slot);
  // The batch size at which a published request combines at once.
  uint32_t Quorum(const kernels::Tier &tier) const;
  // After a batch of `taken` that `reached` the quorum (or its oldest
  // request's deadline came first): the quorum for the next ones. False if
  // the batch was its combiner's request alone.
  bool Adapt(const kernels::Tier &tier, bool reached, size_t taken);

  std::atomic<Slot *> slots_{nullptr};  // grows only; slots are reused
  std::atomic<uint32_t> pending_{0};    // published, not yet taken
  // The batch size at which the arrival that completes it combines at
  // once; adapted to how many requests come within their deadlines.
  std::atomic<uint32_t> quorum_{0};  // 0: as many as there are threads
  std::atomic<uint32_t> threads_{0};  // threads joined
};

// How long a request takes alone on the single-stream kernel: the first
// requests that come here run alone and are timed, and so are a few
// later ones, to follow the machine. The deadlines above are from it.
class SoloTime {
 public:
  // Whether this request should run alone to be timed (`resting`:
  // batching rests).
  static bool WantSample(bool resting);
  // Nanoseconds for `len` bytes with `rounds`-round keys, as such a
  // request usually takes alone; 0 before the first sample.
  static uint64_t Nanos(size_t len, uint32_t rounds);
  // The same in its slower runs while batching rests, when every thread
  // runs its requests alone (the scheduler interrupts some: about the 99th
  // percentile of the recent samples), never below Nanos(). The latency
  // promise is made against it.
  static uint64_t TailNanos(size_t len, uint32_t rounds);
  // Runs `request` alone, as a sample; `resting`: batching rests.
  static void RunAndLearn(const kernels::Tier &tier,
                          const CbcRequest &request, bool resting);
};

// CLOCK_MONOTONIC, in nanoseconds (no system call: the vDSO).
uint64_t NowNanos();
// The CPU time of all of the process's threads, in nanoseconds (a system
// call); 0 if the clock cannot be read.
uint64_t ProcessCpuNanos();

// Test hook (tests/provider/combiner_test.cc): called by a thread
// that combines, with the number of requests it took, after taking them
// and before running them. Null in production.
using CombineHook = void (*)(size_t batch);
void SetCombineHookForTesting(CombineHook hook);

}  // namespace aesmux::batch::internal

#endif  // AESMUX_PROVIDER_BATCH_INTERNAL_SHARD_H_
