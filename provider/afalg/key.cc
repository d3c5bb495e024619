// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The afalg path's keys: Tfm, one kernel key (a bound, keyed tfm socket)
// with its idle op sockets, and Key, a context's handle on one, which runs
// block-mode and GCM requests on this thread's io_uring ring. The probe and
// the path's health are in afalg.cc.
#include <linux/if_alg.h>
#include <pthread.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "provider/afalg/afalg.h"
#include "provider/afalg/fault.h"
#include "provider/afalg/fd_budget.h"
#include "provider/afalg/process.h"
#include "provider/afalg/ring.h"
#include "provider/afalg/socket_setup.h"
#include "provider/afalg/unique_fd.h"
#include "provider/core/process.h"

namespace aesmux::afalg {

using core::Alg;
using core::Direction;
using core::Family;
using core::Handoff;

namespace {

constexpr size_t kBlock = 16;
constexpr size_t kTagLen = 16;
constexpr size_t kGcmIvLen = 12;

void AddToCounter(uint8_t counter[kBlock], uint64_t blocks) {
  for (int i = kBlock - 1; i >= 0 && blocks != 0; --i) {
    const uint64_t sum = counter[i] + (blocks & 0xff);
    counter[i] = static_cast<uint8_t>(sum);
    blocks = (blocks >> 8) + (sum >> 8);
  }
}

// Setting up a socket or ring failed: for want of descriptors (the
// budget's or the process's), or otherwise.
Outcome OpenFailure(int error) {
  const bool no_fds = error == -EMFILE || error == -ENFILE;
  return Outcome::Fail(no_fds ? Handoff::kFdBudget : Handoff::kSetup, error);
}

}  // namespace

// -------------------------------------------------------------------- Tfm

namespace {

// Idle op sockets a key keeps for its next requests (more are closed when
// they come back): one for each synchronous caller, one more for ASYNC
// jobs or a copied context in flight at the same time.
constexpr size_t kMaxIdleOpSockets = 2;

std::atomic<uint64_t> g_idle_op_sockets{0};

// Closes an op socket taken under ReserveFds(1).
void CloseOpSocket(int fd) {
  close(fd);
  ReturnFds(1);
}

}  // namespace

// One kernel key (a bound, keyed tfm socket) and its idle op sockets,
// shared by the keys of copied contexts (reference counted). Every Tfm of
// the process is on one list, so that idle op sockets can be closed when
// the descriptor budget runs short.
class Tfm {
 public:
  // A new kernel key; -errno, -EMFILE when over the descriptor budget.
  // `*key_refused` says whether it was the driver that refused the key
  // (ALG_SET_KEY failed).
  static int Open(Alg alg, std::span<const uint8_t> key, Tfm **out,
                  bool *key_refused) {
    *key_refused = false;
    if (const int fault = TakeFault(Fault::kSocketSetup); fault != 0) {
      return fault;
    }
    const Family family = core::Info(alg).family;
    // Before the bind: a driver that goes after it is this key's.
    const uint32_t driver_epoch = DriverEpoch(family);
    if (!ReserveFds(1)) return -EMFILE;
    const int raw = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (raw < 0) {
      const int error = -errno;
      ReturnFds(1);
      return error;
    }
    UniqueFd fd = UniqueFd::Budgeted(raw);
    if (!FdLeavesHeadroom(raw)) return -EMFILE;
    const KernelAlgorithm kernel = KernelAlgorithmFor(family);
    if (const int ret = BindAlgorithm(fd.get(), kernel.type,
                                      Service::Get().BindName(family));
        ret != 0) {
      return ret;
    }
    if (const int ret = SetSocketKey(fd.get(), family, key); ret != 0) {
      *key_refused = true;
      return ret;
    }
    auto *tfm = new (std::nothrow) Tfm(std::move(fd), family, driver_epoch);
    if (tfm == nullptr) return -ENOMEM;
    *out = tfm;
    return 0;
  }

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  bool ours() const { return fd_.ours(); }

  // An op socket, idle or new; -errno, -EMFILE when over the budget.
  int Acquire() {
    {
      std::lock_guard lock(mutex_);
      if (idle_count_ != 0) {
        g_idle_op_sockets.fetch_sub(1, std::memory_order_relaxed);
        return idle_[--idle_count_];
      }
    }
    if (!ReserveFds(1)) return -EMFILE;
    const int fd = accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      const int error = -errno;
      ReturnFds(1);
      return error;
    }
    if (!FdLeavesHeadroom(fd)) {
      CloseOpSocket(fd);
      return -EMFILE;
    }
    return fd;
  }

  // Back to the pool after a clean request; closed after a failed one (its
  // state in the kernel is unknown) or when the pool is full. -1: the
  // socket was closed under the request (fault injection).
  void Release(int fd, bool reuse) {
    if (fd < 0) {
      ReturnFds(1);
      return;
    }
    if (reuse) {
      std::lock_guard lock(mutex_);
      if (idle_count_ < idle_.size()) {
        idle_[idle_count_++] = fd;
        g_idle_op_sockets.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
    CloseOpSocket(fd);
  }

  // Closes the idle op sockets (in this process only: a parent's are left
  // alone, see process.h).
  void CloseIdle() {
    // A parent's Tfm in a forked child: its sockets are the parent's, and
    // its mutex may have been held by a parent thread at the fork (a
    // request taking or giving back a socket): touch neither.
    if (!ours()) return;
    std::lock_guard lock(mutex_);
    g_idle_op_sockets.fetch_sub(idle_count_, std::memory_order_relaxed);
    for (; idle_count_ != 0; --idle_count_) {
      CloseOpSocket(idle_[idle_count_ - 1]);
    }
  }

  static void CloseIdleEverywhere();

 private:
  Tfm(UniqueFd fd, Family family, uint32_t driver_epoch);
  ~Tfm();

  std::atomic<uint32_t> refs_{1};
  UniqueFd fd_;
  // The driver's epoch when this key was made (DriverGoneSince): a kernel
  // key whose driver went away is never closed, since closing it calls
  // into the driver (virtio-crypto's then waits for a device that is gone,
  // or uses memory it freed). Its op sockets may close: the kernel key
  // outlives them.
  Family family_;
  uint32_t driver_epoch_;
  std::mutex mutex_;
  std::array<int, kMaxIdleOpSockets> idle_{};  // guarded by mutex_
  size_t idle_count_ = 0;                      // guarded by mutex_
  Tfm *prev_ = nullptr;                        // the list: guarded by its
  Tfm *next_ = nullptr;                        // mutex
};

namespace {

// Every Tfm of the process. The mutex is held across fork (a child must
// not inherit it locked) and is taken after core::InitLock and before a
// Tfm's own.
struct TfmList {
  std::mutex mutex;
  Tfm *head = nullptr;
};
constinit TfmList g_tfms;

void RegisterTfmForkHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    const auto release = [] {
      g_tfms.mutex.unlock();
      core::ReleaseInitLockAfterFork();
    };
    pthread_atfork(
        [] {
          core::HoldInitLockForFork();  // a probe takes it, then this one
          g_tfms.mutex.lock();
        },
        release, release);
  });
}

}  // namespace

Tfm::Tfm(UniqueFd fd, Family family, uint32_t driver_epoch)
    : fd_(std::move(fd)), family_(family), driver_epoch_(driver_epoch) {
  RegisterTfmForkHandlers();
  std::lock_guard lock(g_tfms.mutex);
  next_ = g_tfms.head;
  if (next_ != nullptr) next_->prev_ = this;
  g_tfms.head = this;
}

Tfm::~Tfm() {
  {
    std::lock_guard lock(g_tfms.mutex);
    if (prev_ != nullptr) {
      prev_->next_ = next_;
    } else {
      g_tfms.head = next_;
    }
    if (next_ != nullptr) next_->prev_ = prev_;
  }
  CloseIdle();
  if (DriverGoneSince(family_, driver_epoch_)) (void)fd_.release();
}

void Tfm::CloseIdleEverywhere() {
  std::lock_guard lock(g_tfms.mutex);
  for (Tfm *tfm = g_tfms.head; tfm != nullptr; tfm = tfm->next_) {
    tfm->CloseIdle();
  }
}

void CloseIdleOpSockets() { Tfm::CloseIdleEverywhere(); }

uint64_t IdleOpSockets() {
  return g_idle_op_sockets.load(std::memory_order_relaxed);
}

// -------------------------------------------------------------------- Key

Key::Key() = default;
Key::~Key() { Reset(); }

void Key::Reset() {
  in_flight_.Cancel();  // before the op socket's key can go
  if (tfm_ != nullptr) tfm_->Unref();
  tfm_ = nullptr;
  key_refused_ = false;
}

void Key::ShareFrom(const Key &other) {
  if (other.tfm_ != nullptr) other.tfm_->Ref();
  Reset();
  tfm_ = other.tfm_;
  key_refused_ = other.key_refused_;
}

Outcome Key::Open(Alg alg, std::span<const uint8_t> key) {
  if (tfm_ != nullptr && tfm_->ours()) return Outcome::Ok();
  // The driver refused this key before: it would again (an engine out of
  // sessions gives them back only as other keys go), so the key stays on
  // the CPU until it changes, at no cost per request.
  if (key_refused_) return Outcome::Fail(Handoff::kKeyRefused, -EINVAL);
  Reset();
  bool refused = false;
  const int ret = Tfm::Open(alg, key, &tfm_, &refused);
  if (ret != 0) {
    tfm_ = nullptr;
    if (refused) {
      key_refused_ = true;
      Service::Get().NoteKeyRefused(core::Info(alg).family, ret);
      return Outcome::Fail(Handoff::kKeyRefused, ret);
    }
    return OpenFailure(ret);
  }
  return Outcome::Ok();
}

namespace {

// The data of one request: up to three pieces of input and output.
struct Pieces {
  std::array<iovec, 4> tx{};
  std::array<iovec, 4> rx{};
  unsigned tx_count = 0;
  unsigned rx_count = 0;
  void Add(const uint8_t *in, uint8_t *out, size_t len) {
    tx[tx_count++] = {const_cast<uint8_t *>(in), len};
    rx[rx_count++] = {out, len};
  }
};

// Runs one prepared request on this thread's ring; `in_flight` holds it
// while its ASYNC job is paused.
Outcome RunRequest(Request &request, InFlight &in_flight, size_t expected,
                   uint64_t total, Family family) {
  request.punt = Service::Get().offload(family);
  request.family = static_cast<int>(family);
  int error = 0;
  Ring *ring = Ring::ForThisThread(&error);
  if (ring == nullptr) return OpenFailure(error);
  const int ret = ring->Run(request, in_flight);
  if (ret == -EAGAIN) return Outcome::Fail(Handoff::kRingFull, ret);
  // No memory for its bounce buffer (ring.h).
  if (ret == -ENOMEM) return Outcome::Fail(Handoff::kSetup, ret);
  if (ret == -ECHILD) return Outcome::Fail(Handoff::kForked, ret);
  if (ret == -ENODEV) return Outcome::Fail(Handoff::kDriverGone, ret);
  if (ret < 0) return Outcome::Fail(Handoff::kSubmit, ret);
  int result = request.result;
  if (const int fault = TakeFault(Fault::kCompletionError, total);
      fault != 0) {
    result = fault;
  }
  if (result < 0) return Outcome::FromErrno(result);
  if (static_cast<size_t>(result) != expected) {
    return Outcome::Fail(Handoff::kIoError, -EIO);
  }
  return Outcome::Ok();
}

}  // namespace

Outcome Key::Blocks(Alg alg, std::span<const uint8_t> key,
                    Direction direction, uint8_t *iv,
                    std::span<const core::Segment> segments,
                    uint8_t *keystream) {
  in_flight_.Cancel();  // left by a job on this key that never came back
  uint64_t total = 0;
  for (const core::Segment &segment : segments) total += segment.len;
  if (total == 0) return Outcome::Ok();
  const Family family = core::Info(alg).family;
  const size_t max_request = Service::Get().max_request() & ~(kBlock - 1);
  if (family == Family::kXts && total > max_request) {
    return Outcome::Fail(Handoff::kTooLong, -EMSGSIZE);
  }
  if (Outcome opened = Open(alg, key); !opened.ok()) return opened;

  const bool encrypt =
      family == Family::kCtr || direction == Direction::kEncrypt;
  const uint32_t op = encrypt ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
  uint8_t chain[kBlock] = {};
  if (family != Family::kEcb) std::memcpy(chain, iv, kBlock);
  const size_t iv_len = family == Family::kEcb ? 0 : kBlock;
  // CTR's last partial block goes zero-padded; its output block, XORed with
  // the padded input, is the keystream block.
  const size_t tail = family == Family::kCtr ? total % kBlock : 0;
  uint8_t tail_in[kBlock] = {};
  uint8_t tail_out[kBlock] = {};

  size_t segment_index = 0;
  size_t offset = 0;  // in segments[segment_index]
  uint64_t remaining = total;
  while (remaining != 0) {
    // One request: up to max_request bytes, in at most three pieces.
    Pieces pieces;
    size_t left = static_cast<size_t>(
        std::min<uint64_t>(remaining, max_request));
    size_t taken = 0;
    size_t sent = 0;
    uint8_t *last_out = nullptr;
    const uint8_t *last_in = nullptr;
    while (left != 0 && pieces.tx_count < 3) {
      const core::Segment &segment = segments[segment_index];
      const size_t take = std::min(left, segment.len - offset);
      const uint8_t *in = segment.in + offset;
      uint8_t *out = segment.out + offset;
      const bool ends_stream = segment_index + 1 == segments.size() &&
                               offset + take == segment.len;
      const size_t partial = ends_stream ? tail : 0;
      if (take > partial) {
        pieces.Add(in, out, take - partial);
        sent += take - partial;
        if (take - partial >= kBlock) {
          last_out = out + take - partial - kBlock;
          last_in = in + take - partial - kBlock;
        }
      }
      if (partial != 0) {
        std::memcpy(tail_in, in + take - partial, partial);
        pieces.tx[pieces.tx_count++] = {tail_in, kBlock};
        pieces.rx[pieces.rx_count++] = {tail_out, kBlock};
        sent += kBlock;
      }
      left -= take;
      taken += take;
      offset += take;
      if (offset == segment.len) {
        ++segment_index;
        offset = 0;
      }
    }

    Request request;
    request.tx = pieces.tx;
    request.rx = pieces.rx;
    request.rx_count = pieces.rx_count;
    request.op_fd = tfm_->Acquire();
    if (request.op_fd < 0) return OpenFailure(request.op_fd);
    PrepareSend(request, op, chain, iv_len, -1, pieces.tx_count);
    const Outcome outcome =
        RunRequest(request, in_flight_, sent, total, family);
    tfm_->Release(request.op_fd, outcome.ok());
    if (!outcome.ok()) return outcome;

    // The chaining value for the next chunk (and the caller).
    switch (family) {
      case Family::kCbc:
        if (encrypt) {
          std::memcpy(chain, last_out, kBlock);
        } else {
          std::memcpy(chain, last_in, kBlock);
        }
        break;
      case Family::kCtr:
        AddToCounter(chain, sent / kBlock);
        break;
      default:
        break;
    }
    remaining -= taken;
  }

  if (tail != 0) {
    // The output's tail, and the keystream block for the caller's `num`.
    const core::Segment &final_segment = segments.back();
    uint8_t *out_tail = final_segment.out + final_segment.len - tail;
    std::memcpy(out_tail, tail_out, tail);
    for (size_t i = 0; i < kBlock; ++i) keystream[i] = tail_out[i] ^ tail_in[i];
  }
  if (family == Family::kCbc || family == Family::kCtr) {
    std::memcpy(iv, chain, kBlock);
  }
  return Outcome::Ok();
}

Outcome Key::Gcm(Alg alg, std::span<const uint8_t> key, Direction direction,
                 std::span<const uint8_t> iv, std::span<const uint8_t> aad,
                 uint8_t *out, const uint8_t *in, size_t len,
                 uint8_t tag[16]) {
  in_flight_.Cancel();  // left by a job on this key that never came back
  if (iv.size() != kGcmIvLen) {
    return Outcome::Fail(Handoff::kUnsupported, -EOPNOTSUPP);
  }
  if (!Service::Get().GcmFits(aad.size(), len)) {
    return Outcome::Fail(Handoff::kTooLong, -EMSGSIZE);
  }
  if (Outcome opened = Open(alg, key); !opened.ok()) return opened;
  const bool encrypt = direction == Direction::kEncrypt;

  Request request;
  unsigned tx = 0, rx = 0;
  if (!aad.empty()) {
    request.tx[tx++] = {const_cast<uint8_t *>(aad.data()), aad.size()};
    // The kernel writes the AAD back in front of the output: left in the
    // bounce buffer (ring.h).
    request.rx[rx++] = {nullptr, aad.size()};
  }
  if (len != 0) {
    request.tx[tx++] = {const_cast<uint8_t *>(in), len};
    request.rx[rx++] = {out, len};
  }
  if (encrypt) {
    request.rx[rx++] = {tag, kTagLen};
  } else {
    request.tx[tx++] = {tag, kTagLen};
  }
  request.rx_count = rx;
  request.op_fd = tfm_->Acquire();
  if (request.op_fd < 0) return OpenFailure(request.op_fd);
  PrepareSend(request, encrypt ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT, iv.data(),
              iv.size(), static_cast<int64_t>(aad.size()), tx);
  const size_t expected = aad.size() + len + (encrypt ? kTagLen : 0);
  const Outcome outcome = RunRequest(request, in_flight_, expected,
                                     aad.size() + len, Family::kGcm);
  tfm_->Release(request.op_fd, outcome.ok());
  return outcome;
}

}  // namespace aesmux::afalg
