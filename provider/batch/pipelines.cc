// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// CBC encryption of a cipher pipeline's streams together in multi-buffer
// lanes (cbc_batch.h), on the calling thread's lanes.
#include <algorithm>
#include <iterator>
#include <mutex>

#include "provider/batch/internal/lanes.h"

namespace aesmux::batch {

bool EncryptCbcStreams(const kernels::Tier &tier,
                       std::span<const CbcRequest> requests) {
  const QueueRef queue = internal::ThisThreadQueue();
  if (!queue) return false;
  kernels::mb::CbcJob jobs[32];
  const size_t count = std::min(requests.size(), std::size(jobs));
  for (size_t i = 0; i < count; ++i) jobs[i] = internal::JobFor(requests[i]);
  std::lock_guard lock(queue->mutex);
  return internal::RunInLanes(queue->managers, tier, std::span(jobs, count));
}

}  // namespace aesmux::batch
