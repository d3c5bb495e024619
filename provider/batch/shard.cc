// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The thread combiner's shards (internal/shard.h): publishing a request,
// waiting for a combiner, combining.
#include "provider/batch/internal/shard.h"

#include <sched.h>

#include <new>
#include <span>

namespace aesmux::batch::internal {
namespace {

using kernels::mb::CbcJob;
using kernels::mb::MbTier;

// How many times a combiner with a small batch gives the CPU to callers on
// their way back before it runs what it has.
constexpr int kYieldsForCompany = 4;
// How many times a caller waiting for a combiner gives the CPU away
// before it sleeps.
constexpr int kYieldsBeforeSleep = 64;

}  // namespace

Shard::~Shard() {
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;) {
    Slot *next = slot->next;
    delete slot;
    slot = next;
  }
}

bool Shard::Idle() const {
  if (busy_.test(std::memory_order_acquire)) return false;
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
    if (slot->in_use.compare_exchange_strong(free, true)) return slot;
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

Ran Shard::Publish(const MbTier &tier, const kernels::Tier &single,
                   const CbcRequest &request, Slot &mine) {
  members_.fetch_add(1, std::memory_order_relaxed);
  const Ran ran = WaitOrCombine(tier, single, request, mine);
  members_.fetch_sub(1, std::memory_order_relaxed);
  return ran;
}

Ran Shard::WaitOrCombine(const MbTier &tier, const kernels::Tier &single,
                         const CbcRequest &request, Slot &mine) {
  mine.request = &request;
  mine.state.store(kPublished, std::memory_order_release);
  for (;;) {
    if (!busy_.test_and_set(std::memory_order_acquire)) {
      // The combiners before us have left; one of them may have served
      // our request since we published it.
      if (mine.state.load(std::memory_order_acquire) == kDone) {
        mine.state.store(kIdle, std::memory_order_relaxed);
        Leave();
        return mine.ran;
      }
      return Combine(tier, single, mine);
    }
    // Someone is combining: sleep until served, or asked to take over.
    if (!AwaitTurn(mine)) return mine.ran;
  }
}

bool Shard::AwaitTurn(Slot &mine) {
  uint32_t state = mine.state.load(std::memory_order_acquire);
  for (;;) {
    switch (state) {
      case kPublished:
      case kTaken: {
        // Give the CPU away a few times before sleeping: waking a sleeper
        // costs the combiner a system call and, in a VM, an interrupt to
        // another CPU, often more than the batch's own work.
        const uint32_t seen = state;
        for (int i = 0; i < kYieldsBeforeSleep && state == seen; ++i) {
          sched_yield();
          state = mine.state.load(std::memory_order_acquire);
        }
        if (state != seen) break;
        mine.state.wait(state, std::memory_order_acquire);
        state = mine.state.load(std::memory_order_acquire);
        break;
      }
      case kDone:
        mine.state.store(kIdle, std::memory_order_relaxed);
        return false;
      case kWake:
        // The last combiner left with our request pending: try to take
        // over, unless a new combiner takes the request first.
        if (mine.state.compare_exchange_strong(state, kPublished,
                                               std::memory_order_acq_rel)) {
          return true;
        }
        break;  // `state` holds what the exchange found
      default:
        return false;  // kIdle: not reached while a request is pending
    }
  }
}

void Shard::TakePending(const Slot &mine) {
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;
       slot = slot->next) {
    if (batch_size_ == kMaxBatch) return;
    if (slot != &mine && Take(*slot)) batch_[batch_size_++] = slot;
  }
}

bool Shard::Take(Slot &slot) {
  uint32_t state = slot.state.load(std::memory_order_acquire);
  while (state == kPublished || state == kWake) {
    if (slot.state.compare_exchange_weak(state, kTaken,
                                         std::memory_order_acq_rel)) {
      return true;
    }
  }
  return false;
}

Ran Shard::Combine(const MbTier &tier, const kernels::Tier &single,
                   Slot &mine) {
  // Our own request first (a departing combiner may just have marked it
  // kWake); then every other request pending now.
  mine.state.store(kTaken, std::memory_order_relaxed);
  batch_[0] = &mine;
  batch_size_ = 1;
  TakePending(mine);
  // Callers just served by the last batch are still on their way back
  // with their next request: while the batch is small and such callers
  // exist, give them the CPU a few times (no clock involved: nothing
  // waits once they are all here, and a caller alone never gets here).
  for (int i = 0; i < kYieldsForCompany && batch_size_ < tier.lanes &&
                  members_.load(std::memory_order_relaxed) > batch_size_;
       ++i) {
    sched_yield();
    TakePending(mine);
  }
  const std::span<Slot *const> batch(batch_.data(), batch_size_);
  const std::span<CbcJob> jobs(jobs_.data(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    jobs[i] = JobFor(*batch[i]->request);
  }
  // One request, or no memory for lanes: each alone.
  const bool in_lanes =
      batch.size() > 1 && RunInLanes(managers_, tier, jobs);
  if (!in_lanes) {
    for (Slot *slot : batch) RunAlone(single, *slot->request);
  }
  const Ran ran = in_lanes ? Ran::kInLanes : Ran::kAlone;
  // Hand results back, then leave.
  for (Slot *slot : batch) {
    if (slot == &mine) continue;
    slot->ran = ran;
    slot->state.store(kDone, std::memory_order_release);
    slot->state.notify_one();
  }
  mine.state.store(kIdle, std::memory_order_relaxed);
  Leave();
  return ran;
}

void Shard::Leave() {
  busy_.clear(std::memory_order_release);
  // Wake one request that arrived meanwhile so that it takes over.
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;
       slot = slot->next) {
    uint32_t published = kPublished;
    if (slot->state.compare_exchange_strong(published, kWake,
                                            std::memory_order_acq_rel)) {
      slot->state.notify_one();
      break;
    }
  }
}

}  // namespace aesmux::batch::internal
