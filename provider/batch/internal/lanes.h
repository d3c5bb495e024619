// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// What the three ways of feeding multi-buffer lanes share (cbc_batch.h):
// the lane managers, the one sequence that runs requests in them, and a
// thread's queue of its ASYNC jobs' requests.
//
// The sequence, written once here: Enqueue() each request (submit, then
// drain what completed), Complete() each (flush until it is done, take it
// out), ReportBatches() (the kernel calls and lanes filled, counted in the
// statistics). RunInLanes() is the whole of it for requests that are all
// here (thread combining, pipelines); ASYNC batching enqueues before its
// job pauses and completes after. A request that ran alone or in lanes is
// counted on its path by the router, from what EncryptCbc returns.
//
// Private to provider/batch/. Nothing here throws or waits on a clock.
#ifndef AESMUX_PROVIDER_BATCH_INTERNAL_LANES_H_
#define AESMUX_PROVIDER_BATCH_INTERNAL_LANES_H_

// Layers (DEVELOPERS.md): only what links aesmux_batch includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_batch)
#error "provider/batch/internal/lanes.h belongs to a layer above the one that includes it"
#endif

#include <openssl/async.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>

#include "kernels/mb/lane_manager.h"
#include "provider/batch/cbc_batch.h"
#include "provider/core/process.h"

namespace aesmux::batch {
namespace internal {

// Runs `request` alone, at once, on `tier`'s single-stream CBC kernel.
inline void RunAlone(const kernels::Tier &tier, const CbcRequest &request) {
  tier.ops.cbc_encrypt(request.key, request.iv, request.out, request.in,
                       request.len);
}

// The lane job for `request`.
inline kernels::mb::CbcJob JobFor(const CbcRequest &request) {
  return {request.key, request.iv, request.out, request.in, request.len};
}

// Lane managers, one per tier and key size, created on first
// use. Used by one thread at a time (the holder of a JobQueue's lock, or
// of a shard's combiner).
class Managers {
 public:
  // Null if there is no memory for it: the caller runs its requests alone.
  kernels::mb::CbcLaneManager *For(const kernels::Tier &tier,
                                   uint32_t rounds);

  // Counts the kernel calls made since the last report (batches and the
  // lanes they filled) for each key size.
  void ReportBatches();

 private:
  struct Reported {
    uint64_t calls = 0;
    uint64_t lanes = 0;
  };
  static constexpr size_t kTiers = kernels::kTiers.size();
  std::array<std::array<std::unique_ptr<kernels::mb::CbcLaneManager>, 3>,
             kTiers>
      managers_;
  std::array<std::array<Reported, 3>, kTiers> reported_{};
};

// Submits `job` and pops every job the manager has completed in order
// (their owners see `done` when they look).
void Enqueue(kernels::mb::CbcLaneManager &manager, kernels::mb::CbcJob &job);

// Runs `manager` until `job` is complete, then takes it out: its caller
// may return (and an ASYNC job's stack, where `job` lives, be the next
// job's) while jobs queued before it by jobs still paused are not
// complete, so it cannot wait to be returned in order.
void Complete(kernels::mb::CbcLaneManager &manager, kernels::mb::CbcJob &job);

// Runs `jobs` together in lanes of `tier`, then reports the batches. False,
// having run nothing, if there is no memory for a lane manager one of them
// needs.
bool RunInLanes(Managers &managers, const kernels::Tier &tier,
                std::span<kernels::mb::CbcJob> jobs);

}  // namespace internal

// A thread's lanes for its ASYNC jobs' requests and its pipelines. Shared
// with the contexts whose requests it holds (their QueuedRequest), which
// may cancel them from any thread: `mutex` guards everything else. Per
// process: in a forked child the forking thread gets a new one; the
// inherited one lives on while a paused job or a context refers to it, but
// is never run or locked. Counted by hand (QueueRef), not by a
// shared_ptr: making one must not throw, because it is made on an ASYNC
// job's stack, where AddressSanitizer cannot follow an exception's unwind
// (its stale stack poison then fails a later call there).
struct JobQueue {
  std::atomic<uint32_t> refs{1};
  std::mutex mutex;
  internal::Managers managers;
  int lonely_flushes = 0;
  int skip_left = 0;
  const uint64_t generation = core::ProcessGeneration();

  bool ours() const { return generation == core::ProcessGeneration(); }

  // Under `mutex`: `queued` now stands for `job`, pending in `manager`,
  // and holds a reference to `queue`.
  static void Hold(QueuedRequest &queued, JobQueue &queue,
                   kernels::mb::CbcLaneManager &manager,
                   kernels::mb::CbcJob &job) {
    queue.refs.fetch_add(1, std::memory_order_relaxed);
    queued.queue_ = &queue;
    queued.manager_ = &manager;
    queued.job_ = &job;
  }
  // Whether `queued` still stands for `job` (not cancelled since).
  static bool Holds(const QueuedRequest &queued,
                    const kernels::mb::CbcJob &job) {
    return queued.job_ == &job;
  }
  static void Forget(QueuedRequest &queued) {
    Unref(std::exchange(queued.queue_, nullptr));
    queued.manager_ = nullptr;
    queued.job_ = nullptr;
  }
  static void Unref(JobQueue *queue) {
    if (queue != nullptr &&
        queue->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete queue;
    }
  }
};

// A counted reference to a JobQueue; null if there is none.
class QueueRef {
 public:
  QueueRef() = default;
  explicit QueueRef(JobQueue *adopted) : queue_(adopted) {}
  QueueRef(const QueueRef &other) : queue_(other.queue_) {
    if (queue_ != nullptr) queue_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  QueueRef &operator=(QueueRef other) {
    std::swap(queue_, other.queue_);
    return *this;
  }
  ~QueueRef() { JobQueue::Unref(queue_); }

  explicit operator bool() const { return queue_ != nullptr; }
  JobQueue &operator*() const { return *queue_; }
  JobQueue *operator->() const { return queue_; }

 private:
  JobQueue *queue_ = nullptr;
};

namespace internal {

// This thread's queue; null if there is no memory for it.
QueueRef ThisThreadQueue();

// EncryptCbc() inside ASYNC job `job` (async_jobs.cc).
Ran EncryptInJob(ASYNC_JOB *job, const kernels::Tier &tier,
                 const CbcRequest &request);

}  // namespace internal
}  // namespace aesmux::batch

#endif  // AESMUX_PROVIDER_BATCH_INTERNAL_LANES_H_
