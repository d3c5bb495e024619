// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// One shard of the thread combiner (combiner.cc): a group of threads that
// publish CBC encryptions into their slots, one of which at a time takes
// the combiner's part and runs every published request in one batch.
// Which shard a thread uses, and when a thread batches at all, is
// combiner.cc's business; this is the publish / wait / combine protocol.
//
// Private to provider/batch/. Nothing here throws or waits on a clock.
#ifndef AESMUX_PROVIDER_BATCH_INTERNAL_SHARD_H_
#define AESMUX_PROVIDER_BATCH_INTERNAL_SHARD_H_

// Layers (DEVELOPERS.md): only what links aesmux_batch includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_batch)
#error "provider/batch/internal/shard.h belongs to a layer above the one that includes it"
#endif

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/mb/lane_manager.h"
#include "provider/batch/cbc_batch.h"
#include "provider/batch/internal/lanes.h"

namespace aesmux::batch::internal {

// A thread's publication slot. States:
enum SlotState : uint32_t {
  kIdle,       // nothing published
  kPublished,  // a request waits for a combiner
  kTaken,      // a combiner has it
  kDone,       // served
  kWake,       // the combiner left: try to become the combiner (a new
               // combiner may still take the request, as if published)
};

struct Slot {
  std::atomic<uint32_t> state{kIdle};
  const CbcRequest *request = nullptr;
  Ran ran = Ran::kAlone;  // how the combiner ran it, once kDone
  std::atomic<bool> in_use{true};
  Slot *next = nullptr;  // immutable once linked
};

// One group of threads that batch together: the threads publish into its
// slots and one of them at a time combines. The Combiner keeps one shard
// per CPU, so that as many batches as CPUs can run at once.
class Shard {
 public:
  Shard() = default;
  Shard(const Shard &) = delete;
  Shard &operator=(const Shard &) = delete;
  ~Shard();

  // No thread combines now and none holds a slot.
  bool Idle() const;

  // A free slot of this shard for the calling thread, or nullptr.
  Slot *Reuse();
  // A new slot for the calling thread; null if there is no memory for it.
  Slot *Add();

  // Publishes `request` in `mine` and waits until a combiner (maybe this
  // thread) has run it.
  Ran Publish(const kernels::mb::MbTier &tier, const kernels::Tier &single,
              const CbcRequest &request, Slot &mine);

 private:
  Ran WaitOrCombine(const kernels::mb::MbTier &tier,
                    const kernels::Tier &single, const CbcRequest &request,
                    Slot &mine);
  // Sleeps while `mine` is pending or being served: false once served,
  // true when this thread should try to become the combiner.
  static bool AwaitTurn(Slot &mine);
  // Claims a pending request for this combiner.
  static bool Take(Slot &slot);
  // Claims every pending request but `mine` into batch_.
  void TakePending(const Slot &mine);
  Ran Combine(const kernels::mb::MbTier &tier, const kernels::Tier &single,
              Slot &mine);
  // Releases the combiner and wakes one pending request to take over.
  void Leave();

  std::atomic<uint32_t> members_{0};  // threads inside Publish()
  std::atomic_flag busy_ = ATOMIC_FLAG_INIT;
  std::atomic<Slot *> slots_{nullptr};  // grows only; slots are reused
  // Owned by the thread holding `busy_`. A batch takes at most kMaxBatch
  // requests; the rest wait for the next combiner.
  static constexpr size_t kMaxBatch = 64;
  Managers managers_;
  std::array<Slot *, kMaxBatch> batch_{};
  size_t batch_size_ = 0;
  std::array<kernels::mb::CbcJob, kMaxBatch> jobs_{};
};

}  // namespace aesmux::batch::internal

#endif  // AESMUX_PROVIDER_BATCH_INTERNAL_SHARD_H_
