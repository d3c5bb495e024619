// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Ring: this thread's io_uring ring, which runs AF_ALG requests.
//
// A request is two linked SQEs on one op socket: sendmsg (the cmsgs set the
// operation, IV and AAD length; no MSG_MORE, so the request is complete)
// then readv of the result; it is over when both have completed.
//
// The kernel copies the sendmsg's data, IV and AAD length when it runs it,
// and references no page of the caller's afterwards. The result is read
// into the bounce buffer of the request's slot (bounce.h), which a forked
// child does not get, and copied to the request's `rx` when the request
// completes with all of it read: an AF_ALG read holds plain references to
// the pages it writes until the request is done, and were they the
// caller's, a fork() meanwhile would leave them shared with the child and
// the output in the child's copy. A request that does not complete whole
// (failed, short, cancelled, given up) writes nothing into `rx`, so its
// input is intact even where `rx` overlaps it.
//
// Waiting:
// - a synchronous caller submits everything queued and waits for its own
//   completion in the same io_uring_enter (one syscall per request when the
//   kernel completes it inline, as it does for synchronous drivers);
// - inside an OpenSSL ASYNC job, the request is queued without a syscall,
//   the job's wait fd is the ring's eventfd (made readable at once if no
//   one has done so since it was last drained, so the application resumes
//   the jobs promptly), and the job pauses. A resumed job whose request is
//   still queued submits everything the jobs queued meanwhile in one
//   io_uring_enter; a job whose request is complete returns without a
//   syscall; one whose request is in flight pauses again on the eventfd.
//   Jobs must be resumed on the thread that started them (OpenSSL keeps
//   ASYNC jobs per thread). A job that is never resumed leaves its request
//   queued: its key cancels it through an InFlight (in_flight.h).
//
// Requests on an offload driver (Request::punt) are handed to io-wq
// workers, synchronous callers' too: a driver that never completes a
// request (virtio-crypto's, when its device is removed, drops those in
// flight) then holds a kernel worker, not the caller. The ring keeps a
// timeout armed while such requests are out (kPatienceNs), so that every
// wait, an ASYNC job's wait fd included, comes back at least that often;
// a request that has waited that long makes the ring ask the Service
// whether its driver is still listed in /proc/crypto. If it is, or the
// file cannot be read then, the wait goes on (a slow engine is not a lost
// one: the kernel may still write the output); if it is not, the device
// is gone, nothing will complete or write the request any more, and the
// ring gives it up (-ENODEV): the caller serves it on the CPU. Its slot
// stays taken until the kernel posts what it owes, which may be never.
//
// A ring belongs to the process that made it; in a forked child the
// parent's ring is ignored (never touched, never unmapped; its bounce
// buffers are not even there) and a new one is made if the child is armed
// (process.h). fork() does not wait for the kernel: what it writes after
// the fork is in bounce buffers, which stay the parent's alone.
//
// Errors: -errno. A request that failed before its read has the sendmsg's
// error (or -ECANCELED) as its result.
#ifndef AESMUX_PROVIDER_AFALG_RING_H_
#define AESMUX_PROVIDER_AFALG_RING_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/ring.h belongs to a layer above the one that includes it"
#endif

#include <liburing.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "provider/afalg/bounce.h"
#include "provider/afalg/in_flight.h"

namespace aesmux::afalg {

// cmsgs: ALG_SET_OP (u32), ALG_SET_IV (u32 length + up to 16 bytes),
// ALG_SET_AEAD_ASSOCLEN (u32).
inline constexpr size_t kControlSize =
    CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(uint32_t) + 16) +
    CMSG_SPACE(sizeof(uint32_t));

struct alignas(8) Request {
  int op_fd = -1;
  msghdr msg{};
  std::array<iovec, 4> tx{};
  // Where the result goes, in order: at most BounceBuffers::kBytes in all;
  // the bytes of a piece whose base is null are not copied anywhere.
  std::array<iovec, 4> rx{};
  unsigned rx_count = 0;
  alignas(cmsghdr) unsigned char control[kControlSize] = {};
  // Hand the request to an io-wq worker (IOSQE_ASYNC): set for offload
  // drivers, whose reads would otherwise block the submitting thread in
  // the kernel (one after the other in a batch, and for good when the
  // driver loses the request). CPU drivers run inline: cheaper, and
  // measured no faster punted (TCG).
  bool punt = false;
  // With punt: the family whose driver serves it (core::Family), for the
  // question above.
  int family = -1;

  // Set by the ring.
  int result = 0;        // the read's result, or the first error
  bool read_seen = false;
  bool send_seen = false;
  bool done = false;
  int slot = -1;
  int64_t waiting_since_ns = 0;  // with punt
  iovec bounce{};  // what the read fills: in the slot's bounce buffer
};

// How long a request on an offload driver waits before the ring asks
// whether its driver is still there (then again after as long).
inline constexpr int64_t kPatienceNs = 1'000'000'000;

// Fills `request.msg` for the sendmsg: operation (ALG_OP_ENCRYPT/DECRYPT),
// IV (`iv_len` bytes; none if 0) and, for AEAD, the AAD length (`assoclen`
// >= 0). `tx_count` iovecs of request.tx are the data.
void PrepareSend(Request &request, uint32_t op, const uint8_t *iv,
                 size_t iv_len, int64_t assoclen, unsigned tx_count);

// io_uring_enter calls this process has made for AF_ALG requests (for
// tests that count syscalls per request).
uint64_t RingEnters();

class Ring : public std::enable_shared_from_this<Ring> {
 public:
  // This thread's ring, made on first use in this process; nullptr with
  // -errno in `error` if io_uring is unavailable.
  static Ring *ForThisThread(int *error);

  // Runs one request and waits for it (see above). Returns 0 when the
  // request completed (its outcome in request.result: bytes read, copied
  // to rx if they are all of rx, or -errno); -EAGAIN if the ring had no room,
  // -ENOMEM if its bounce buffer could not be mapped, -EMSGSIZE if rx is longer
  // than one, and -EIO if it is unusable, nothing having been queued; -ECHILD
  // if its ASYNC job paused before a fork() and was resumed in the child (the
  // request stays in the parent's ring); -ENODEV if its driver went away with
  // it (given up, above); another -errno if the ring failed while waiting.
  // While its ASYNC job is paused, `in_flight` holds the request, so that
  // its key can cancel it (in_flight.h).
  int Run(Request &request, InFlight &in_flight);
  // The same on this thread alone, even inside an ASYNC job: for the
  // probe, which must not pause a job while it holds the init lock.
  int RunNow(Request &request);

  // InFlight::Cancel's part: the request's SQEs become NOPs if they were
  // not submitted, else this waits for its completion. False, touching
  // nothing, if the ring is a parent's.
  bool Cancel(Request &request);

  // Whether this process made the ring (not a parent before fork).
  bool ours() const;

  ~Ring();
  Ring(const Ring &) = delete;
  Ring &operator=(const Ring &) = delete;

 private:
  Ring() = default;
  int Init();
  int InitReserved();
  int Queue(Request &request);
  // Submits what is queued; on failure, the SQEs the kernel did not take
  // become NOPs and their requests fail with the error.
  int Flush();
  void Reap();
  void Complete(const io_uring_cqe &cqe);
  // The request is over: its slot is free (it is owed no CQE).
  void Finish(Request &request);
  // Copies the request's result from its bounce buffer to its rx.
  static void CopyOut(const Request &request);
  // Queues the timeout that bounds waits while offload requests are out.
  void ArmTimeout();
  // After a wait: if `request` (not done) has waited kPatienceNs and its
  // driver is no longer listed, gives it up (-ENODEV in its result) and
  // returns true; else re-arms the timeout if it is due.
  bool GiveUpIfLost(Request &request);
  int WaitSync(Request &request);
  // Called with `lock` held; releases it while paused, and returns with it
  // held unless resumed in a forked child (-ECHILD).
  int WaitInJob(Request &request, std::unique_lock<std::mutex> &lock);

  // Everything below, and the ring, are used under this lock: by the
  // ring's thread, and by InFlight::Cancel from any thread.
  std::mutex mutex_;
  io_uring ring_{};
  int event_fd_ = -1;
  uint64_t generation_ = 0;
  bool poisoned_ = false;
  // The eventfd's counter may be non-zero (we wrote it, or CQEs were posted
  // since we last drained it).
  bool signalled_ = false;
  unsigned queued_ = 0;     // SQEs not yet submitted
  unsigned in_flight_ = 0;  // requests not yet complete
  // The requests by slot (a CQE's user_data names its slot, not its
  // request, so that a request given up can go while the kernel still owes
  // its CQEs): null for a free slot or one given up, which owes
  // owed_[slot] CQEs before it is free again.
  static constexpr unsigned kSlots = 32;
  std::array<Request *, kSlots> slots_{};
  std::array<uint8_t, kSlots> owed_{};
  uint32_t used_slots_ = 0;
  // One per slot: a slot's buffer is the kernel's until the slot is free.
  BounceBuffers bounce_;
  static_assert(kSlots == BounceBuffers::kCount);
  bool timeout_armed_ = false;
  __kernel_timespec patience_{};
};

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_RING_H_
