// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/afalg/bounce.h"

#include <sys/mman.h>

#include <cerrno>

#include "provider/afalg/fault.h"
#include "provider/core/process.h"

namespace aesmux::afalg {

BounceBuffers::~BounceBuffers() {
  ForgetIfInherited();
  for (uint8_t *buffer : buffers_) {
    if (buffer != nullptr) munmap(buffer, kBytes);
  }
}

void BounceBuffers::ForgetIfInherited() noexcept {
  if (generation_ == core::ProcessGeneration()) return;
  buffers_.fill(nullptr);
  generation_ = core::ProcessGeneration();
}

uint8_t *BounceBuffers::Get(unsigned index, int *error) noexcept {
  ForgetIfInherited();
  if (buffers_[index] != nullptr) return buffers_[index];
  if (const int fault = TakeFault(Fault::kBounceMap); fault != 0) {
    *error = fault;
    return nullptr;
  }
  void *buffer = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buffer == MAP_FAILED) {
    *error = -errno;
    return nullptr;
  }
  if (madvise(buffer, kBytes, MADV_DONTFORK) != 0) {
    *error = -errno;
    munmap(buffer, kBytes);
    return nullptr;
  }
  buffers_[index] = static_cast<uint8_t *>(buffer);
  return buffers_[index];
}

unsigned BounceBuffers::mapped() const noexcept {
  if (generation_ != core::ProcessGeneration()) return 0;
  unsigned count = 0;
  for (const uint8_t *buffer : buffers_) count += buffer != nullptr;
  return count;
}

}  // namespace aesmux::afalg
