// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// InFlight: a key's hold on a request that a paused ASYNC job left in its
// thread's io_uring ring (ring.h), until the job comes back for it.
//
// An application may never resume a paused job (servers drop the jobs of
// connections they close) and then free or re-key the context and reuse
// the job's buffers. The request's sendmsg and read would still be
// submitted by the next job's flush, and the kernel would read and write
// those buffers. The key cancels its InFlight first: a request not yet
// submitted never is; one the kernel has is waited for.
#ifndef AESMUX_PROVIDER_AFALG_IN_FLIGHT_H_
#define AESMUX_PROVIDER_AFALG_IN_FLIGHT_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/in_flight.h belongs to a layer above the one that includes it"
#endif

#include <memory>

namespace aesmux::afalg {

class Ring;
struct Request;

class InFlight {
 public:
  InFlight() = default;
  ~InFlight() { Cancel(); }
  InFlight(const InFlight &) = delete;
  InFlight &operator=(const InFlight &) = delete;

  // When this returns, the kernel is done with the request's buffers (it
  // never ran, or it completed) and its op socket is closed. Safe on any
  // thread (it waits while the ring's thread uses the ring); does nothing
  // if no request is held, or if the ring is a parent's (a forked child
  // never touches it).
  void Cancel() {
    if (ring_ != nullptr) CancelHeld();
  }

 private:
  friend class Ring;
  [[gnu::cold]] void CancelHeld();
  std::shared_ptr<Ring> ring_;
  Request *request_ = nullptr;
};

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_IN_FLIGHT_H_
