// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The afalg path: AES through the Linux kernel crypto API, over AF_ALG
// sockets driven by io_uring.
//
// What happens when (the sandbox rule: no syscall of a new kind is issued
// lazily from a request unless that kind was set up in this process at
// provider init, or belongs to an `auto` probe, which a family's first
// large request makes: a process that will enter a sandbox after loading
// and should use an offload driver settles the families first, with
// force or by asking for the afalg.<family> parameters):
//
// - Once per process while the provider stays loaded, for each family
//   whose policy is not off (Service::Probe): under force at provider
//   init; under auto when the router settles the family, on its first
//   request of at least afalg_min_len, its first GCM context or when asked
//   (route/router.h), so that loading reads nothing (BENCHMARKS.md,
//   "What does loading aesmux cost: start-up and memory?"):
//     auto:  /proc/crypto is read (one open/read/close for all families).
//            If its best implementation of the family's algorithm is CPU
//            software, or it cannot be read, the family is refused there
//            and nothing else is done: a default configuration on a
//            machine without an offload driver costs that one read at its
//            first large request and no syscall afterwards.
//     force, or auto with an offload driver listed: /proc/sys/crypto/
//            af_alg_restrict is read, then socket(AF_ALG), bind, accept and
//            SO_SNDBUF on a probe socket, /proc/crypto again for the driver
//            bind chose, NETLINK_CRYPTO for its flags (where permitted), and
//            this thread's io_uring ring with its eventfd is made, and its
//            first bounce buffer (mmap + madvise MADV_DONTFORK, bounce.h)
//            for the known answers. Success arms the process (process.h).
// - Later, in an armed process only: per key, on its first request routed
//   here, socket + bind + ALG_SET_KEY (+ ALG_SET_AEAD_AUTHSIZE), and accept
//   for op sockets as needed (up to two kept in a pool per key); per
//   thread, on its first request, io_uring_setup + eventfd + register; per
//   ring slot, on its first request, mmap + madvise of its bounce buffer
//   (64 KiB; a synchronous caller uses one slot, ASYNC jobs up to 32); per
//   request, io_uring_enter (one, or none inside an ASYNC job whose batch
//   another job submits). Each descriptor is opened within the descriptor
//   budget (fd_budget.h), after a getrlimit (also made at init). Closing
//   happens when keys are freed, when a pool is full, and when the budget
//   runs short (idle op sockets).
// - A process that is not armed (policy off, probe refused, or a forked
//   child without afalg_fork = rebuild) never issues any of these.
//
// Errors inside this layer are -errno; what the router needs is an Outcome.
#ifndef AESMUX_PROVIDER_AFALG_AFALG_H_
#define AESMUX_PROVIDER_AFALG_AFALG_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/afalg.h belongs to a layer above the one that includes it"
#endif

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <forward_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "provider/afalg/bounce.h"
#include "provider/afalg/in_flight.h"
#include "provider/core/algorithm.h"

namespace aesmux::afalg {

// What one request on the afalg path came to.
struct Outcome {
  int error = 0;                            // 0, or -errno
  core::Handoff reason = core::Handoff::kIoError;  // when error != 0

  static Outcome Ok() { return {}; }
  static Outcome Fail(core::Handoff reason, int error) {
    return {error != 0 ? error : -EIO, reason};
  }
  // From a kernel or ring result.
  static Outcome FromErrno(int error);
  bool ok() const { return error == 0; }
  // Whether the failure says the path is broken (rather than that this
  // request did not fit it).
  bool Unhealthy() const;
};

// What the probe found for one family.
struct FamilyStatus {
  bool probed = false;
  bool available = false;  // bound, keyed and a ring made: usable
  // The implementation bind() chose (from /proc/crypto), if known.
  std::string driver;
  int priority = 0;
  bool async = false;
  bool cpu_software = false;
  std::optional<bool> kern_driver_only;  // from NETLINK_CRYPTO
  // What keys bind to: the offload driver's name where /proc/crypto lists
  // one (a bind by the algorithm's name gets the implementation of highest
  // priority, which may be CPU software), else the algorithm's name.
  std::string bind_name;
  // When bound by driver name past an implementation of higher priority:
  // that one ("cbc-aes-aesni (priority 400)").
  std::string outranked;
  // The key sizes (bytes) whose known answer (known_answers.h) the driver
  // gave, and why each other one is not used.
  std::vector<size_t> key_lens;
  std::string key_notes;
  // Why the family is not available, or notes.
  std::string reason;
  // Whether probing stopped at /proc/crypto because auto found only CPU
  // software there.
  bool listing_only = false;
  // The process that probed (process.h): a forked child that loads a
  // provider probes again, for itself.
  uint64_t generation = 0;

  // Whether this family may run here under `force` (anything that binds)
  // or `auto` (only an offload driver).
  bool Usable(bool force) const {
    return available && (force || !cpu_software);
  }
  // Whether keys of `key_len` bytes passed the probe.
  bool KeyUsable(size_t key_len) const;
  // One line for people: "cbc-aes-aesni (priority 400, CPU software)" or
  // the reason it is not available.
  std::string Describe() const;
};

// The kernel's name and socket type for a family, from its row in
// core::kFamilies (whose names are NUL-terminated literals).
struct KernelAlgorithm {
  const char *type;  // "skcipher" or "aead"
  const char *name;  // "cbc(aes)"
};
KernelAlgorithm KernelAlgorithmFor(core::Family family);

// Process-wide state: probe results, arming, health. It lives while at
// least one provider instance does (each route::Router holds it through
// Acquire/Release), so unloading the provider frees it and a later load
// probes afresh. Get() is only valid between the two.
class Service {
 public:
  static Service &Get();
  // Throws std::bad_alloc, acquiring nothing, if memory runs out.
  static void Acquire();
  static void Release();

  // Probes `family` unless already done (to the depth
  // asked for: `force` needs a bind even when /proc/crypto lists only CPU
  // software). Thread-safe; the first call per family does the work.
  void Probe(core::Family family, bool force);
  FamilyStatus status(core::Family family) const;
  // What a key of `family` binds to (FamilyStatus::bind_name), once probed.
  std::string BindName(core::Family family) const;

  // Whether `family` binds to an offload driver (no lock: per request).
  bool offload(core::Family family) const {
    return offload_[static_cast<size_t>(family)].load(
        std::memory_order_relaxed);
  }

  // Largest request (bytes sent, AAD and tag included) one op socket takes.
  size_t max_request() const { return max_request_.load(); }
  // Whether a GCM message of `aad_len` bytes of AAD and `len` of payload
  // fits one request (Key::Gcm refuses it otherwise).
  bool GcmFits(size_t aad_len, size_t len) const {
    return aad_len + len + 16 <= max_request();
  }

  // Per request: nullopt if the path may serve `alg` now, else why not;
  // `fork_rebuild` is the asking provider's afalg_fork (process.h).
  std::optional<core::Handoff> Admit(core::Alg alg, bool fork_rebuild) const;
  // After a request: failures that say the path is broken make `alg` rest
  // for a while (1 s, doubling per consecutive failure, at most 64 s); a
  // success ends the streak.
  void Report(core::Alg alg, const Outcome &outcome);

  // The driver refused a key of `family` (ALG_SET_KEY failed with
  // `error`): counted for Health().
  void NoteKeyRefused(core::Family family, int error);

  // Asked when a request on an offload driver has waited long (ring.h):
  // whether the driver `family` bound is still listed in /proc/crypto.
  // Once it is not (its device was removed), the family is gone for the
  // rest of this Service: Admit() hands its requests to the CPU
  // (kDriverGone), and the kernel keys made before are never used or
  // closed again (key.cc: the driver does not survive it). True for CPU
  // drivers, which do not go away, and when /proc/crypto cannot be read
  // (no verdict: the request waits on and asks again, since a driver still
  // there may yet complete it). It allocates nothing and uses 1 KiB of
  // stack (ListsDriver): it runs under noexcept dispatch functions and
  // destructors, and on an ASYNC job's stack.
  bool DriverListed(core::Family family) noexcept;
  bool gone(core::Family family) const {
    return gone_[static_cast<size_t>(family)].load(std::memory_order_relaxed);
  }
  // A request of `family` the driver lost: served on the CPU.
  void NoteLost(core::Family family) {
    lost_[static_cast<size_t>(family)].fetch_add(1, std::memory_order_relaxed);
  }

  // For people: what happened on the path of `family` since the probe
  // (keys refused, failures and rests, the driver gone), or "" if
  // nothing did.
  std::string Health(core::Family family) const;

  // Tests: the first rest period (default 1 s), and forgetting health.
  void SetBackoffForTesting(std::chrono::milliseconds base);
  void ResetHealthForTesting();

 private:
  Service() = default;
  void ProbeLocked(core::Family family, bool force);
  // Binds `tfm`, under force by the algorithm's name if no offload driver
  // binds; fills the status's driver fields. 0 or -errno.
  int BindForProbe(int tfm, core::Family family, bool force,
                   FamilyStatus &status);
  // Keys `tfm`, then a socket of its own bound to the same implementation
  // for each further key size of `family` (a driver may keep a key's
  // session on the device until its socket closes, whatever keys it sees
  // after: virtio-crypto does, and an engine's sessions are few), and checks
  // each size's known answer through this thread's ring; fills key_lens and
  // key_notes.
  void CheckKeySizes(int tfm, core::Family family, FamilyStatus &status);
  int ReadProcCrypto();

  // status_ and the /proc/crypto text are guarded by core::InitLock.
  std::array<FamilyStatus, core::kNumFamilies> status_{};
  std::string proc_crypto_;  // last read
  bool proc_crypto_read_ = false;
  std::atomic<size_t> max_request_{kLargestRequest};
  std::array<std::atomic<bool>, core::kNumFamilies> offload_{};

  struct AlgHealth {
    std::atomic<int64_t> resting_until_ns{0};
    std::atomic<uint32_t> failures{0};  // in a row
    std::atomic<uint32_t> failed{0};    // since the probe
    std::atomic<int> last_error{0};
    std::atomic<uint8_t> last_reason{0};
  };
  std::array<AlgHealth, core::kNumAlgs> health_{};
  std::atomic<int64_t> backoff_base_ns_{1'000'000'000};

  // Per family: keys refused and the last error; the offload driver
  // watched for going away ("" for CPU software; null until probed),
  // whether it has, and the requests it lost. The watched names are read
  // without a lock (a mutex held by a reader at a fork would hang the child
  // at its next probe or report), so each probe adds its own to
  // driver_names_ (under core::InitLock), which keeps every one until the
  // Service goes.
  std::array<std::atomic<uint32_t>, core::kNumFamilies> keys_refused_{};
  std::array<std::atomic<int>, core::kNumFamilies> key_error_{};
  std::forward_list<std::string> driver_names_;
  std::array<std::atomic<const std::string *>, core::kNumFamilies>
      watched_driver_{};
  std::array<std::atomic<bool>, core::kNumFamilies> gone_{};
  std::array<std::atomic<uint32_t>, core::kNumFamilies> lost_{};
};

// Kernel keys (key.cc) bound to a driver that later went away must never be
// used or closed: each records its family's epoch when it is made, which
// goes up when the family's driver goes (Service::DriverListed).
uint32_t DriverEpoch(core::Family family);
bool DriverGoneSince(core::Family family, uint32_t epoch);

class Tfm;

// One key on the afalg path, for one engine (and the engines copied from
// it, which share its kernel key and op-socket pool). Sockets are made on
// the first request, in an armed process only, within the descriptor
// budget (fd_budget.h): a key that finds it spent hands its requests to
// the CPU until descriptors come back. Nothing here throws.
class Key {
 public:
  Key();
  ~Key();
  Key(const Key &) = delete;
  Key &operator=(const Key &) = delete;

  // A new key: the next request opens a new kernel key. Cancels what
  // CancelQueued() cancels.
  void Reset();
  // Shares `other`'s kernel key (dupctx).
  void ShareFrom(const Key &other);
  // Cancels the request a paused ASYNC job left in a ring with this key
  // and never came back for (see in_flight.h); the destructor and every
  // request do the same first.
  void CancelQueued() { in_flight_.Cancel(); }

  // ECB, CBC, CTR, XTS, with the contract of route::BlockEngine::Run. The
  // segments' inputs must not overlap their outputs (the caller stages
  // in-place requests). `iv` and `keystream` change only on success; on
  // failure the outputs are unspecified and the inputs untouched.
  Outcome Blocks(core::Alg alg, std::span<const uint8_t> key,
                 core::Direction direction, uint8_t *iv,
                 std::span<const core::Segment> segments, uint8_t *keystream);

  // One whole GCM message of `len` bytes with a 12-byte IV and 16-byte tag.
  // Encrypting writes the tag to `tag`; decrypting checks `tag` and fails
  // with Handoff::kBadTag if it does not match. `in` must not overlap
  // `out`. On failure `out` is unspecified.
  Outcome Gcm(core::Alg alg, std::span<const uint8_t> key,
              core::Direction direction, std::span<const uint8_t> iv,
              std::span<const uint8_t> aad, uint8_t *out, const uint8_t *in,
              size_t len, uint8_t tag[16]);

 private:
  Outcome Open(core::Alg alg, std::span<const uint8_t> key);
  Tfm *tfm_ = nullptr;  // a reference
  bool key_refused_ = false;  // the driver refused this key (Handoff::kKeyRefused)
  InFlight in_flight_;  // cancelled by Reset(), before tfm_ is released
};

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_AFALG_H_
