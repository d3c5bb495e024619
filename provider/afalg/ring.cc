// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/afalg/ring.h"

#include <linux/if_alg.h>
#include <openssl/async.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "provider/afalg/afalg.h"
#include "provider/afalg/fault.h"
#include "provider/afalg/fd_budget.h"
#include "provider/afalg/process.h"
#include "provider/core/async_wait.h"
#include "provider/core/thread_exit.h"

namespace aesmux::afalg {
namespace {

// Two SQEs and CQEs per request (Ring::kSlots of them in flight at most)
// and one for the timeout: the CQ (2 × kEntries) never overflows.
constexpr unsigned kEntries = 64;

// user_data: 0 for what no one waits for (NOPs), kTimeoutData for the
// timeout, else the request's slot + 1 shifted left twice, with kSendTag
// for its sendmsg.
constexpr uint64_t kSendTag = 1;
constexpr uint64_t kTimeoutData = 2;
uint64_t SlotData(int slot) { return static_cast<uint64_t>(slot + 1) << 2; }
int SlotOf(uint64_t data) { return static_cast<int>(data >> 2) - 1; }

int64_t NowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);  // vDSO: no syscall
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// Identifies aesmux's fd in an ASYNC_WAIT_CTX.
const char kWaitKey = 0;

// This thread's ring, in its core::ThreadSlot::kRing (released when the
// thread exits): shared with the InFlights that hold its requests, so that
// it outlives its thread while they do. A parent's ring in a forked child
// is dropped without a syscall on it (~Ring).
using RingHold = std::shared_ptr<Ring>;

RingHold *ThisThreadsRing() {
  return static_cast<RingHold *>(core::ThreadObject(core::ThreadSlot::kRing));
}

void ReleaseRing(void *hold) { delete static_cast<RingHold *>(hold); }

std::atomic<uint64_t> g_enters{0};
void CountEnter() { g_enters.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

uint64_t RingEnters() { return g_enters.load(std::memory_order_relaxed); }

void PrepareSend(Request &request, uint32_t op, const uint8_t *iv,
                 size_t iv_len, int64_t assoclen, unsigned tx_count) {
  std::memset(request.control, 0, sizeof(request.control));
  request.msg = msghdr{};
  request.msg.msg_iov = request.tx.data();
  request.msg.msg_iovlen = tx_count;
  request.msg.msg_control = request.control;
  size_t control_len = CMSG_SPACE(sizeof(uint32_t));
  if (iv_len != 0) control_len += CMSG_SPACE(sizeof(uint32_t) + iv_len);
  if (assoclen >= 0) control_len += CMSG_SPACE(sizeof(uint32_t));
  request.msg.msg_controllen = control_len;

  cmsghdr *cmsg = CMSG_FIRSTHDR(&request.msg);
  cmsg->cmsg_level = SOL_ALG;
  cmsg->cmsg_type = ALG_SET_OP;
  cmsg->cmsg_len = CMSG_LEN(sizeof(uint32_t));
  std::memcpy(CMSG_DATA(cmsg), &op, sizeof(op));
  if (iv_len != 0) {
    cmsg = CMSG_NXTHDR(&request.msg, cmsg);
    cmsg->cmsg_level = SOL_ALG;
    cmsg->cmsg_type = ALG_SET_IV;
    cmsg->cmsg_len = CMSG_LEN(sizeof(uint32_t) + iv_len);
    const auto length = static_cast<uint32_t>(iv_len);
    std::memcpy(CMSG_DATA(cmsg), &length, sizeof(length));
    std::memcpy(CMSG_DATA(cmsg) + sizeof(length), iv, iv_len);
  }
  if (assoclen >= 0) {
    cmsg = CMSG_NXTHDR(&request.msg, cmsg);
    cmsg->cmsg_level = SOL_ALG;
    cmsg->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
    cmsg->cmsg_len = CMSG_LEN(sizeof(uint32_t));
    const auto length = static_cast<uint32_t>(assoclen);
    std::memcpy(CMSG_DATA(cmsg), &length, sizeof(length));
  }
}

Ring *Ring::ForThisThread(int *error) {
  RingHold *hold = ThisThreadsRing();
  if (hold != nullptr && *hold != nullptr) {
    Ring &ring = **hold;
    if (!ring.ours()) {
      hold->reset();  // the parent's, in a forked child
    } else {
      std::lock_guard lock(ring.mutex_);
      if (!ring.poisoned_ || ring.in_flight_ != 0) return &ring;
      hold->reset();  // broken and idle: make a new one
    }
  }
  if (hold == nullptr) {
    hold = new (std::nothrow) RingHold;
    if (hold == nullptr ||
        !core::SetThreadObject(core::ThreadSlot::kRing, hold, ReleaseRing)) {
      delete hold;
      *error = -ENOMEM;
      return nullptr;
    }
  }
  RingHold ring;
  try {
    ring.reset(new Ring);  // with its shared count's block
  } catch (const std::bad_alloc &) {
    *error = -ENOMEM;
    return nullptr;
  }
  if (const int ret = ring->Init(); ret < 0) {
    *error = ret;
    return nullptr;
  }
  *hold = std::move(ring);
  return hold->get();
}

// The ring's two descriptors (io_uring's and the eventfd) come out of the
// descriptor budget, as one reservation: Init gives both back on failure,
// the destructor when it closes them.
int Ring::Init() {
  if (const int fault = TakeFault(Fault::kRingSetup); fault != 0) return fault;
  if (!ReserveFds(2)) return -EMFILE;
  const int ret = InitReserved();
  if (ret < 0) ReturnFds(2);
  return ret;
}

int Ring::InitReserved() {
  const int ret = io_uring_queue_init(kEntries, &ring_, 0);
  if (ret < 0) return ret;
  generation_ = ProcessGeneration();
  if (!FdLeavesHeadroom(ring_.ring_fd)) {
    io_uring_queue_exit(&ring_);
    generation_ = 0;
    return -EMFILE;
  }
  io_uring_probe *probe = io_uring_get_probe_ring(&ring_);
  const bool has_ops = probe != nullptr &&
                       io_uring_opcode_supported(probe, IORING_OP_SENDMSG) &&
                       io_uring_opcode_supported(probe, IORING_OP_READV);
  if (probe != nullptr) io_uring_free_probe(probe);
  if (!has_ops) {
    io_uring_queue_exit(&ring_);
    generation_ = 0;
    return -EOPNOTSUPP;
  }
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0 || !FdLeavesHeadroom(event_fd_) ||
      io_uring_register_eventfd(&ring_, event_fd_) < 0) {
    const int error = event_fd_ < 0                ? -errno
                      : !FdLeavesHeadroom(event_fd_) ? -EMFILE
                                                     : -EOPNOTSUPP;
    if (event_fd_ >= 0) close(event_fd_);
    io_uring_queue_exit(&ring_);
    generation_ = 0;
    return error;
  }
  return 0;
}

Ring::~Ring() {
  if (generation_ == 0 || !ours()) return;
  // Closing the ring ends what the kernel still had (a poisoned ring's).
  io_uring_queue_exit(&ring_);
  close(event_fd_);
  ReturnFds(2);
}

bool Ring::ours() const { return generation_ == ProcessGeneration(); }

int Ring::Run(Request &request, InFlight &in_flight) {
  request.result = 0;
  request.read_seen = request.send_seen = request.done = false;
  const bool in_job = ASYNC_get_current_job() != nullptr;
  std::unique_lock lock(mutex_);
  if (const int ret = Queue(request); ret < 0) return ret;
  if (!in_job) return WaitSync(request);
  in_flight.ring_ = shared_from_this();
  in_flight.request_ = &request;
  const int ret = WaitInJob(request, lock);
  if (in_flight.request_ == &request) {
    in_flight.ring_.reset();
    in_flight.request_ = nullptr;
  }
  return ret;
}

int Ring::RunNow(Request &request) {
  request.result = 0;
  request.read_seen = request.send_seen = request.done = false;
  std::unique_lock lock(mutex_);
  if (const int ret = Queue(request); ret < 0) return ret;
  return WaitSync(request);
}

bool Ring::Cancel(Request &request) {
  if (!ours()) return false;
  std::lock_guard lock(mutex_);
  if (request.done) return true;
  // Not submitted yet: its SQEs become NOPs that complete unseen.
  io_uring_sq &sq = ring_.sq;
  const unsigned mask = *sq.kring_mask;
  bool unsubmitted = false;
  for (unsigned i = sq.sqe_head; i != sq.sqe_tail; ++i) {
    io_uring_sqe *sqe = &sq.sqes[i & mask];
    if (sqe->user_data != kTimeoutData && sqe->user_data != 0 &&
        SlotOf(sqe->user_data) == request.slot) {
      io_uring_prep_nop(sqe);
      sqe->user_data = 0;
      unsubmitted = true;
    }
  }
  if (unsubmitted) {
    request.result = -ECANCELED;
    Finish(request);
    return true;
  }
  // The kernel has it: wait until it is done with the request's buffers
  // (its data are all sent, so its read ends), or its driver has gone.
  while (!request.done) {
    if (io_uring_cq_ready(&ring_) == 0) {
      if (queued_ != 0) Flush();
      io_uring_cqe *cqe = nullptr;
      CountEnter();
      const int ret = io_uring_wait_cqe(&ring_, &cqe);
      if (ret < 0 && ret != -EINTR && ret != -EAGAIN) {
        poisoned_ = true;  // nothing more will be seen complete
        return true;
      }
    }
    Reap();
    if (!request.done) GiveUpIfLost(request);
  }
  return true;
}

void InFlight::CancelHeld() {
  // A request whose job never came back: it also never returned its op
  // socket, whose state in the kernel is unknown.
  // The socket came out of the descriptor budget (fd_budget.h), even
  // when fault injection closed it already.
  if (ring_->Cancel(*request_)) {
    if (request_->op_fd >= 0) close(request_->op_fd);
    request_->op_fd = -1;
    ReturnFds(1);
  }
  ring_.reset();
  request_ = nullptr;
}

int Ring::Queue(Request &request) {
  if (poisoned_) return -EIO;
  if (TakeFault(Fault::kRingFull) != 0) return -EAGAIN;
  const unsigned sqes = request.punt && !timeout_armed_ ? 3 : 2;
  if (used_slots_ == ~uint32_t{0} || io_uring_sq_space_left(&ring_) < sqes) {
    if (queued_ != 0) Flush();
    if (used_slots_ == ~uint32_t{0} || io_uring_sq_space_left(&ring_) < sqes) {
      return -EAGAIN;
    }
  }
  size_t rx_len = 0;
  for (unsigned i = 0; i < request.rx_count; ++i) {
    rx_len += request.rx[i].iov_len;
  }
  if (rx_len > BounceBuffers::kBytes) return -EMSGSIZE;
  const int slot = __builtin_ctz(~used_slots_);
  int error = 0;
  uint8_t *const bounce = bounce_.Get(static_cast<unsigned>(slot), &error);
  if (bounce == nullptr) return error;
  used_slots_ |= uint32_t{1} << slot;
  slots_[slot] = &request;
  request.slot = slot;
  io_uring_sqe *send = io_uring_get_sqe(&ring_);
  io_uring_sqe *read = io_uring_get_sqe(&ring_);
  // MSG_DONTWAIT: a send that does not fit the socket's buffer fails (and
  // shows as a short read) instead of waiting for a read that cannot start.
  io_uring_prep_sendmsg(send, request.op_fd, &request.msg, MSG_DONTWAIT);
  // No CQE_SKIP_SUCCESS: when a skipped sendmsg fails, kernels do not post
  // the cancelled read's CQE either, and a request must not be given back
  // to its owner while the kernel may still complete part of it.
  send->flags |= IOSQE_IO_LINK;
  // Punted, the link runs whole in an io-wq worker, read included. (A
  // read that follows its sendmsg inline runs in this thread's task work
  // however it is flagged, Linux 6.1: a worker never takes it.)
  if (request.punt) send->flags |= IOSQE_ASYNC;
  io_uring_sqe_set_data64(send, SlotData(slot) | kSendTag);
  request.bounce = {bounce, rx_len};
  io_uring_prep_readv(read, request.op_fd, &request.bounce, 1, 0);
  io_uring_sqe_set_data64(read, SlotData(slot));
  queued_ += 2;
  ++in_flight_;
  if (request.punt) {
    request.waiting_since_ns = NowNs();
    if (!timeout_armed_) ArmTimeout();
  }
  if (const int fault = TakeFault(Fault::kCloseOpSocket); fault != 0) {
    // The op socket goes away after the request was queued.
    close(request.op_fd);
    request.op_fd = -1;
  }
  return 0;
}

void Ring::ArmTimeout() {
  io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) return;  // the next wait arms it
  patience_.tv_sec = kPatienceNs / 1'000'000'000;
  patience_.tv_nsec = kPatienceNs % 1'000'000'000;
  io_uring_prep_timeout(sqe, &patience_, 0, 0);
  io_uring_sqe_set_data64(sqe, kTimeoutData);
  timeout_armed_ = true;
  ++queued_;
}

int Ring::Flush() {
  int ret;
  do {
    CountEnter();
    ret = io_uring_submit(&ring_);
  } while (ret == -EINTR);
  if (ret >= 0) {
    queued_ = 0;
    return 0;
  }
  // The kernel took none or some of the SQEs. The rest must never run:
  // their requests are failed here and may be freed by their owners.
  io_uring_sq &sq = ring_.sq;
  const unsigned mask = *sq.kring_mask;
  for (unsigned i = io_uring_smp_load_acquire(sq.khead); i != sq.sqe_tail;
       ++i) {
    io_uring_sqe *sqe = &sq.sqes[i & mask];
    const uint64_t data = sqe->user_data;
    if (data == kTimeoutData) {
      timeout_armed_ = false;
    } else if (data != 0) {
      Request *request = slots_[SlotOf(data)];
      if (request != nullptr && !request->done) {
        request->result = ret;
        Finish(*request);
      }
    }
    io_uring_prep_nop(sqe);
    sqe->user_data = 0;
  }
  queued_ = 0;
  poisoned_ = true;
  return ret;
}

void Ring::Finish(Request &request) {
  request.done = true;
  slots_[request.slot] = nullptr;
  used_slots_ &= ~(uint32_t{1} << request.slot);
  --in_flight_;
}

void Ring::Complete(const io_uring_cqe &cqe) {
  const uint64_t data = cqe.user_data;
  if (data == 0 || data == LIBURING_UDATA_TIMEOUT) return;
  if (data == kTimeoutData) {
    timeout_armed_ = false;
    return;
  }
  const int slot = SlotOf(data);
  Request *request = slots_[slot];
  if (request == nullptr) {
    // A request given up: the slot is free once the kernel owes nothing.
    if (owed_[slot] != 0 && --owed_[slot] == 0) {
      used_slots_ &= ~(uint32_t{1} << slot);
    }
    return;
  }
  if ((data & kSendTag) != 0) {
    request->send_seen = true;
    if (cqe.res < 0 && request->result >= 0) request->result = cqe.res;
  } else {
    request->read_seen = true;
    if (request->result >= 0) request->result = cqe.res;
  }
  // Both CQEs in: the kernel is done with the request's buffers.
  if (request->read_seen && request->send_seen) {
    if (request->result >= 0 &&
        static_cast<size_t>(request->result) == request->bounce.iov_len) {
      CopyOut(*request);
    }
    Finish(*request);
  }
}

void Ring::CopyOut(const Request &request) {
  const auto *from = static_cast<const uint8_t *>(request.bounce.iov_base);
  for (unsigned i = 0; i < request.rx_count; ++i) {
    if (request.rx[i].iov_base != nullptr) {
      std::memcpy(request.rx[i].iov_base, from, request.rx[i].iov_len);
    }
    from += request.rx[i].iov_len;
  }
}

void Ring::Reap() {
  unsigned head;
  unsigned seen = 0;
  io_uring_cqe *cqe;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    Complete(*cqe);
    ++seen;
  }
  if (seen != 0) {
    io_uring_cq_advance(&ring_, seen);
    signalled_ = true;
  }
}

bool Ring::GiveUpIfLost(Request &request) {
  if (!request.punt || request.family < 0) return false;
  if (NowNs() - request.waiting_since_ns >= kPatienceNs) {
    // Only the Service can tell a slow driver from a gone one.
    const auto family = static_cast<core::Family>(request.family);
    if (!Service::Get().DriverListed(family)) {
      // Its device is gone: what the kernel still holds of the request
      // will never complete, nor write its output.
      Service::Get().NoteLost(family);
      const int slot = request.slot;
      owed_[slot] = static_cast<uint8_t>(!request.send_seen) +
                    static_cast<uint8_t>(!request.read_seen);
      request.result = -ENODEV;
      request.done = true;
      slots_[slot] = nullptr;
      if (owed_[slot] == 0) used_slots_ &= ~(uint32_t{1} << slot);
      --in_flight_;
      return true;
    }
    request.waiting_since_ns = NowNs();
  }
  if (!timeout_armed_) ArmTimeout();
  return false;
}

int Ring::WaitSync(Request &request) {
  while (!request.done) {
    int ret;
    if (queued_ != 0) {
      CountEnter();
      // The request's CQEs (both of a new one) in the same syscall: no
      // more, since one may never come (ring.h), the timeout's then does.
      const unsigned owed = static_cast<unsigned>(!request.send_seen) +
                            static_cast<unsigned>(!request.read_seen);
      ret = io_uring_submit_and_wait(&ring_, owed);
      if (ret >= 0) {
        queued_ = 0;
      } else if (ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
        Flush();  // fails the requests whose SQEs were not taken
        Reap();
        if (request.done) return 0;
        // Taken by the kernel: its completion is still to come.
      }
    } else {
      io_uring_cqe *cqe = nullptr;
      if (io_uring_cq_ready(&ring_) == 0) CountEnter();
      ret = io_uring_wait_cqe(&ring_, &cqe);
      if (ret < 0 && ret != -EINTR && ret != -EAGAIN) {
        // The ring cannot be waited on: nothing more will complete.
        poisoned_ = true;
        return ret;
      }
    }
    Reap();
    if (!request.done && GiveUpIfLost(request)) return -ENODEV;
  }
  return 0;
}

int Ring::WaitInJob(Request &request, std::unique_lock<std::mutex> &lock) {
  if (!core::SetJobWaitFd(ASYNC_get_current_job(), &kWaitKey, event_fd_)) {
    return WaitSync(request);
  }
  if (!signalled_) {
    // Nothing makes the fd readable yet: let the application resume a job
    // soon, so that this batch gets submitted.
    const uint64_t one = 1;
    if (write(event_fd_, &one, sizeof(one)) == sizeof(one)) signalled_ = true;
  }
  // This ring lives on while the job is paused, even if the thread's ring
  // is replaced meanwhile (in a forked child).
  const std::shared_ptr<Ring> self = shared_from_this();
  for (;;) {
    lock.unlock();
    const bool paused = ASYNC_pause_job();
    // Resumed in a forked child: the request is in the parent's ring,
    // which this process never touches.
    if (!ours()) return -ECHILD;
    lock.lock();
    if (!paused) return WaitSync(request);
    // Done already (another job's submission carried it): leave what other
    // jobs queued since for the next job that needs a submission, so that
    // one io_uring_enter carries a whole round of requests.
    Reap();
    if (request.done) return 0;
    // Waited long on a driver that may be gone (the timeout, armed with
    // the request, woke the application).
    if (GiveUpIfLost(request)) return -ENODEV;
    if (queued_ != 0) {
      Flush();
      Reap();
      if (request.done) return 0;
    }
    if (queued_ == 0 && signalled_) {
      // Waiting for the kernel: drain the eventfd so the application blocks
      // until a completion is posted, then look again (one may have come
      // just before the drain).
      uint64_t count;
      (void)!read(event_fd_, &count, sizeof(count));
      signalled_ = false;
      Reap();
      if (request.done) return 0;
    }
  }
}

}  // namespace aesmux::afalg
