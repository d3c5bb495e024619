// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// BounceBuffers: the memory the kernel writes a ring's AF_ALG output into.
//
// AF_ALG takes the pages of a request's output with a plain page
// reference, which fork() does not protect: after a fork the parent's next
// write to such a page gives the parent a copy, and the kernel's output
// lands in the page the child got. These buffers are mapped with
// MADV_DONTFORK: a child does not get them, so the parent keeps the very
// pages the kernel references.
//
// One buffer per index (a ring's slot), kBytes long, mapped on its first
// use in the process and kept until the object goes. The buffers belong to
// the process that mapped them: in a forked child they do not exist, and
// the child neither reads nor unmaps them (an address there may hold the
// child's own memory by then); it maps its own if it asks for one.
//
// Not thread-safe (a ring uses it under its lock). Errors: -errno.
#ifndef AESMUX_PROVIDER_AFALG_BOUNCE_H_
#define AESMUX_PROVIDER_AFALG_BOUNCE_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error \
    "provider/afalg/bounce.h belongs to a layer above the one that includes it"
#endif

#include <array>
#include <cstddef>
#include <cstdint>

namespace aesmux::afalg {

// The most one AF_ALG request carries in either direction (AAD and tag
// included): the op sockets' send buffer is capped to it at the probe
// (Service::max_request), and the bounce buffers are this long.
inline constexpr size_t kLargestRequest = 64 * 1024;

class BounceBuffers {
 public:
  static constexpr size_t kBytes = kLargestRequest;
  static constexpr unsigned kCount = 32;

  BounceBuffers() = default;
  ~BounceBuffers();
  BounceBuffers(const BounceBuffers &) = delete;
  BounceBuffers &operator=(const BounceBuffers &) = delete;

  // Buffer `index` (< kCount), mapped now if this process has not mapped
  // it; nullptr with -errno in `error` if it cannot be (mmap or madvise
  // failed: address space or memory ran out), nothing then held.
  uint8_t *Get(unsigned index, int *error) noexcept;

  // Buffers this process holds mapped (for tests).
  unsigned mapped() const noexcept;

 private:
  // In a forked child: forgets the parent's buffers, without a syscall.
  void ForgetIfInherited() noexcept;

  uint64_t generation_ = 0;  // of the process that mapped buffers_
  std::array<uint8_t *, kCount> buffers_{};
};

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_BOUNCE_H_
