// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Batching inside OpenSSL ASYNC jobs (cbc_batch.h): a request is queued in
// its thread's lanes, the job pauses with a wait fd that is already
// readable, and when it resumes it flushes whatever has queued by then.
#include <sys/eventfd.h>

#include <atomic>

#include "provider/batch/internal/lanes.h"
#include "provider/core/async_wait.h"
#include "provider/core/process.h"

namespace aesmux::batch::internal {
namespace {

using kernels::mb::CbcJob;
using kernels::mb::CbcLaneManager;

// The wait fd every paused job registers: an eventfd made readable once and
// never read, so the application's scheduler resumes the job at its next
// round. One per process (a forked child makes its own and leaves the
// parent's alone), made on the first request inside an async job.
int WaitFd() {
  static constinit std::atomic<int> fd{-1};
  static constinit std::atomic<uint64_t> generation{0};
  const uint64_t now = core::ProcessGeneration();
  if (generation.load(std::memory_order_acquire) == now) {
    return fd.load(std::memory_order_relaxed);
  }
  core::InitLock lock;  // fork() waits while a thread makes one
  if (generation.load(std::memory_order_relaxed) == now) {
    return fd.load(std::memory_order_relaxed);
  }
  const int made = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
  if (made < 0) return -1;  // the next request tries again
  fd.store(made, std::memory_order_relaxed);
  generation.store(now, std::memory_order_release);
  return made;
}

const char kWaitFdKey = 0;  // its address tags our fd in ASYNC_WAIT_CTX

bool RegisterWaitFd(ASYNC_JOB *job) {
  const int fd = WaitFd();
  return fd >= 0 && core::SetJobWaitFd(job, &kWaitFdKey, fd);
}

// After this many flushes in a row that found only the flusher's own
// request, run the next kSkip requests at once; then probe again. A single
// async job (speed -async_jobs 1) thus pauses for one request in kSkip + 1.
constexpr int kLonelyFlushes = 4;
constexpr int kSkip = 63;

}  // namespace

Ran EncryptInJob(ASYNC_JOB *job, const kernels::Tier &tier,
                 const CbcRequest &request) {
  // Left by an earlier job on this context that was never resumed.
  if (request.queued != nullptr) request.queued->Cancel();
  const QueueRef queue = ThisThreadQueue();
  if (!queue) {
    RunAlone(tier, request);
    return Ran::kAlone;
  }
  std::unique_lock lock(queue->mutex);
  if (queue->skip_left > 0 || !RegisterWaitFd(job)) {
    if (queue->skip_left > 0) --queue->skip_left;
    lock.unlock();
    RunAlone(tier, request);
    return Ran::kAlone;
  }
  CbcLaneManager *lanes = queue->managers.For(tier, request.key->rounds);
  if (lanes == nullptr) {
    lock.unlock();
    RunAlone(tier, request);
    return Ran::kAlone;
  }
  CbcLaneManager &manager = *lanes;
  // Small, and on the job's 32 KiB stack only until this request is done.
  CbcJob lane_job = JobFor(request);
  Enqueue(manager, lane_job);
  const bool held = request.queued != nullptr && !lane_job.done;
  if (held) JobQueue::Hold(*request.queued, *queue, manager, lane_job);
  lock.unlock();

  // Let the other jobs queue their requests.
  ASYNC_pause_job();

  // Resumed in a forked child: the parent's lanes are never run (nor
  // locked) here.
  if (!queue->ours()) return lane_job.done ? Ran::kInLanes : Ran::kNot;
  lock.lock();
  if (held) {
    // Cancelled meanwhile: the context was re-initialised or freed under
    // the paused job.
    if (!JobQueue::Holds(*request.queued, lane_job)) return Ran::kNot;
    JobQueue::Forget(*request.queued);
  }
  if (lane_job.done) {
    // Another job's flush ran it, maybe behind an older request.
    manager.Remove(&lane_job);
  } else {
    // Complete this request, and with it everything queued meanwhile.
    const size_t batch = manager.pending();
    Complete(manager, lane_job);
    queue->managers.ReportBatches();
    if (batch > 1) {
      queue->lonely_flushes = 0;
    } else if (++queue->lonely_flushes >= kLonelyFlushes) {
      queue->lonely_flushes = 0;
      queue->skip_left = kSkip;
    }
  }
  return Ran::kInLanes;
}

}  // namespace aesmux::batch::internal
