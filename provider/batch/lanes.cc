// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The lane managers and the one sequence that runs requests in them
// (internal/lanes.h), and the thread queue they live in.
#include "provider/batch/internal/lanes.h"

#include <new>

#include "provider/core/stats.h"
#include "provider/core/thread_exit.h"

namespace aesmux::batch {
namespace internal {
namespace {

using kernels::mb::CbcJob;
using kernels::mb::CbcLaneManager;

// An AES key of 10, 12 or 14 rounds: the lane manager for that key size,
// and the statistics' algorithm.
size_t KeySizeIndex(uint32_t rounds) { return (rounds - 10) / 2; }
constexpr core::Alg kCbcAlgs[] = {core::Alg::kAes128Cbc,
                                   core::Alg::kAes192Cbc,
                                   core::Alg::kAes256Cbc};

// Pops every job the manager has completed in order.
void Drain(CbcLaneManager &manager) {
  while (manager.GetCompleted() != nullptr) {
  }
}

}  // namespace

CbcLaneManager *Managers::For(const kernels::Tier &tier, uint32_t rounds) {
  const auto t = static_cast<size_t>(&tier - kernels::kTiers.data());
  std::unique_ptr<CbcLaneManager> &manager = managers_[t][KeySizeIndex(rounds)];
  if (manager == nullptr) {
    manager.reset(new (std::nothrow) CbcLaneManager(tier, rounds));
  }
  return manager.get();
}

void Managers::ReportBatches() {
  for (auto &row : managers_) {
    for (size_t k = 0; k < row.size(); ++k) {
      if (row[k] == nullptr) continue;
      Reported &last = reported_[&row - managers_.data()][k];
      const uint64_t calls = row[k]->kernel_calls();
      const uint64_t lanes = row[k]->lanes_filled();
      if (calls == last.calls) continue;
      core::CountBatches(kCbcAlgs[k], calls - last.calls, lanes - last.lanes);
      last = {calls, lanes};
    }
  }
}

void Enqueue(CbcLaneManager &manager, CbcJob &job) {
  manager.Submit(&job);
  Drain(manager);
}

void Complete(CbcLaneManager &manager, CbcJob &job) {
  while (!job.done && manager.Flush() != nullptr) {
  }
  manager.Remove(&job);
  Drain(manager);
}

bool RunInLanes(Managers &managers, const kernels::Tier &tier,
                std::span<CbcJob> jobs) {
  for (const CbcJob &job : jobs) {
    if (managers.For(tier, job.key->rounds) == nullptr) return false;
  }
  for (CbcJob &job : jobs) Enqueue(*managers.For(tier, job.key->rounds), job);
  for (CbcJob &job : jobs) Complete(*managers.For(tier, job.key->rounds), job);
  managers.ReportBatches();
  return true;
}

namespace {

// This thread's queue, in its core::ThreadSlot::kLaneQueue (released when
// the thread exits).
void ReleaseQueue(void *queue) { delete static_cast<QueueRef *>(queue); }

}  // namespace

QueueRef ThisThreadQueue() {
  auto *queue = static_cast<QueueRef *>(
      core::ThreadObject(core::ThreadSlot::kLaneQueue));
  if (queue == nullptr) {
    queue = new (std::nothrow) QueueRef;
    if (queue == nullptr ||
        !core::SetThreadObject(core::ThreadSlot::kLaneQueue, queue,
                               ReleaseQueue)) {
      delete queue;
      return {};
    }
  }
  if (!*queue || !(*queue)->ours()) {
    auto *fresh = new (std::nothrow) JobQueue;
    if (fresh == nullptr) return {};
    *queue = QueueRef(fresh);
  }
  return *queue;
}

}  // namespace internal

void QueuedRequest::CancelHeld() {
  // A parent's queue in a forked child is never run (and its lock may have
  // been held by a thread that is not here).
  if (queue_->ours()) {
    std::lock_guard lock(queue_->mutex);
    if (job_ != nullptr) manager_->Remove(job_);
  }
  JobQueue::Forget(*this);
}

QueuedRequest::~QueuedRequest() { Cancel(); }

}  // namespace aesmux::batch
