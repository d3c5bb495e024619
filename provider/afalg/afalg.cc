// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The afalg path's process-wide side: outcomes, the probe of what the
// kernel offers, and the path's health (Service). Kernel keys and the
// requests run on them are in key.cc.
#include "provider/afalg/afalg.h"

#include <linux/if_alg.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

#include "provider/afalg/fd_budget.h"
#include "provider/afalg/kernel_crypto.h"
#include "provider/afalg/process.h"
#include "provider/afalg/ring.h"
#include "provider/afalg/socket_setup.h"
#include "provider/afalg/unique_fd.h"

namespace aesmux::afalg {

using core::Alg;
using core::Direction;
using core::Family;
using core::Handoff;

namespace {

constexpr size_t kLargestRequest = 64 * 1024;

int64_t NowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);  // vDSO: no syscall
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

std::string ErrnoText(int error) {
  const int e = error < 0 ? -error : error;
  std::string name;
  switch (e) {
    case EAFNOSUPPORT: name = "EAFNOSUPPORT"; break;
    case ENOENT: name = "ENOENT"; break;
    case EPERM: name = "EPERM"; break;
    case EACCES: name = "EACCES"; break;
    case EBUSY: name = "EBUSY"; break;
    case ENOSYS: name = "ENOSYS"; break;
    case EINVAL: name = "EINVAL"; break;
    case EOPNOTSUPP: name = "EOPNOTSUPP"; break;
    case ENOMEM: name = "ENOMEM"; break;
    default: name = "errno " + std::to_string(e);
  }
  return name + ": " + std::strerror(e);
}

}  // namespace

// ---------------------------------------------------------------- Outcome

Outcome Outcome::FromErrno(int error) {
  switch (error) {
    case -EBUSY: return Fail(Handoff::kBusy, error);
    case -EINVAL: return Fail(Handoff::kRefused, error);
    case -EBADMSG: return Fail(Handoff::kBadTag, error);
    default: return Fail(Handoff::kIoError, error);
  }
}

bool Outcome::Unhealthy() const {
  if (ok()) return false;
  switch (reason) {
    case Handoff::kSetup:
    case Handoff::kSubmit:
    case Handoff::kBusy:
    case Handoff::kRefused:
    case Handoff::kIoError:
      return true;
    default:
      return false;
  }
}

// ----------------------------------------------------------- FamilyStatus

std::string FamilyStatus::Describe() const {
  if (!probed) return "not probed";
  if (!available) return reason;
  std::string text = driver.empty() ? "(driver unknown)" : driver;
  text += " (priority " + std::to_string(priority);
  if (async) text += ", async";
  text += cpu_software ? ", CPU software" : ", offload driver";
  if (kern_driver_only.has_value() && *kern_driver_only) {
    text += ", KERN_DRIVER_ONLY";
  }
  text += ")";
  return text;
}

KernelAlgorithm KernelAlgorithmFor(Family family) {
  switch (family) {
    case Family::kEcb: return {"skcipher", "ecb(aes)"};
    case Family::kCbc: return {"skcipher", "cbc(aes)"};
    case Family::kCtr: return {"skcipher", "ctr(aes)"};
    case Family::kXts: return {"skcipher", "xts(aes)"};
    case Family::kGcm: return {"aead", "gcm(aes)"};
  }
  return {"skcipher", "?"};
}

// ---------------------------------------------------------------- Service

namespace {
std::mutex g_service_mutex;
size_t g_service_users = 0;           // guarded by g_service_mutex
std::atomic<Service *> g_service{nullptr};
}  // namespace

Service &Service::Get() {
  Service *service = g_service.load(std::memory_order_acquire);
  assert(service != nullptr && "afalg::Service used outside a provider");
  return *service;
}

void Service::Acquire() {
  std::lock_guard lock(g_service_mutex);
  // Counted once made: if making it throws std::bad_alloc, nothing was
  // acquired (the instance is not made) and the next Acquire makes it.
  if (g_service_users == 0) {
    g_service.store(new Service, std::memory_order_release);
  }
  ++g_service_users;
}

void Service::Release() {
  std::lock_guard lock(g_service_mutex);
  assert(g_service_users > 0);
  if (--g_service_users == 0) {
    delete g_service.exchange(nullptr, std::memory_order_acq_rel);
  }
}

FamilyStatus Service::status(Family family) const {
  core::InitLock lock;
  return status_[static_cast<size_t>(family)];
}

void Service::Probe(Family family, bool force) {
  // Under the lock fork() waits for: a probe may run on first use, while
  // another thread forks (afalg_fork = rebuild lets the child probe too).
  core::InitLock lock;
  const FamilyStatus &status = status_[static_cast<size_t>(family)];
  if (status.probed && status.generation == ProcessGeneration() &&
      !(force && status.listing_only)) {
    return;
  }
  ProbeLocked(family, force);
}

int Service::ReadProcCrypto() {
  if (proc_crypto_read_) return 0;
  const int ret = ReadWholeFile("/proc/crypto", &proc_crypto_);
  proc_crypto_read_ = ret == 0;
  return ret;
}

void Service::ProbeLocked(Family family, bool force) {
  FamilyStatus &status = status_[static_cast<size_t>(family)];
  status = FamilyStatus{};
  status.probed = true;
  status.generation = ProcessGeneration();
  const KernelAlgorithm kernel = KernelAlgorithmFor(family);
  const std::string name = kernel.name;

  if (!force) {
    // Under auto the probe may run late (route/router.h), in a process
    // that may have entered a sandbox since: one that denies the read may
    // kill for a socket() call, so auto goes no further than the listing.
    if (const int ret = ReadProcCrypto(); ret != 0) {
      status.listing_only = true;
      status.reason = "cannot read /proc/crypto (" + ErrnoText(ret) +
                      "), so cannot tell an offload driver from CPU software";
      return;
    }
    const std::optional<CryptoAlg> best =
        BestImplementation(proc_crypto_, kernel.name, kernel.type);
    if (!best.has_value() || IsCpuSoftwareDriver(best->driver)) {
      status.listing_only = true;
      if (best.has_value()) {
        status.driver = best->driver;
        status.priority = best->priority;
        status.cpu_software = true;
        status.reason = "no offload driver: the best " + name +
                        " in /proc/crypto is " + best->driver +
                        " (CPU software)";
      } else {
        status.reason = "no offload driver: /proc/crypto lists no " + name;
      }
      return;
    }
  }

  const std::optional<int> restrict_level = ReadAfAlgRestrict();
  if (restrict_level.has_value() && *restrict_level >= 2) {
    status.reason = "AF_ALG is off: /proc/sys/crypto/af_alg_restrict = " +
                    std::to_string(*restrict_level);
    return;
  }
  UniqueFd tfm(socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!tfm.valid()) {
    const int error = -errno;
    status.reason = error == -EAFNOSUPPORT
                        ? "no AF_ALG in this kernel (" + ErrnoText(error) + ")"
                    : error == -EPERM || error == -EACCES
                        ? "AF_ALG denied by seccomp, an LSM or the container (" +
                              ErrnoText(error) + ")"
                        : "socket(AF_ALG): " + ErrnoText(error);
    return;
  }
  if (const int ret = BindAlgorithm(tfm.get(), family); ret != 0) {
    status.reason = "bind " + std::string(kernel.type) + " " + name + ": " +
                    ErrnoText(ret);
    if (ret == -ENOENT) {
      status.reason += restrict_level.value_or(0) == 1
                           ? " (not on af_alg_restrict's allowlist, or no "
                             "implementation)"
                           : " (no implementation)";
    }
    return;
  }
  // Any valid key: a counting pattern (XTS refuses equal halves in FIPS
  // mode).
  uint8_t probe_key[32];
  for (size_t i = 0; i < sizeof(probe_key); ++i) {
    probe_key[i] = static_cast<uint8_t>(i);
  }
  const size_t key_len = family == Family::kXts ? 32 : 16;
  if (const int ret = SetSocketKey(tfm.get(), family, {probe_key, key_len});
      ret != 0) {
    status.reason = "setting a key on " + name + ": " + ErrnoText(ret);
    return;
  }
  UniqueFd op(accept4(tfm.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!op.valid()) {
    status.reason = "accept on " + name + ": " + ErrnoText(-errno);
    return;
  }
  int sndbuf = 0;
  socklen_t sndbuf_len = sizeof(sndbuf);
  if (getsockopt(op.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf, &sndbuf_len) == 0 &&
      sndbuf > 0) {
    const size_t usable = std::max<size_t>(static_cast<size_t>(sndbuf) & ~size_t{4095}, 4096);
    max_request_.store(std::min({max_request_.load(), usable, kLargestRequest}));
  }

  // Which implementation bind chose: the template may exist only now.
  proc_crypto_read_ = false;
  if (ReadProcCrypto() == 0) {
    if (const std::optional<CryptoAlg> best =
            BestImplementation(proc_crypto_, kernel.name, kernel.type)) {
      status.driver = best->driver;
      status.priority = best->priority;
      status.async = best->async;
      status.cpu_software = IsCpuSoftwareDriver(best->driver);
    }
  }
  unsigned flags = 0;
  if (!status.driver.empty() && QueryDriverFlags(status.driver, &flags) == 0) {
    status.kern_driver_only = (flags & kKernDriverOnly) != 0;
    if (*status.kern_driver_only) status.cpu_software = false;
  }
  if (!force && status.cpu_software) {
    status.reason = "no offload driver: " + name + " binds to " +
                    status.driver + " (CPU software)";
    return;
  }

  int error = 0;
  if (Ring::ForThisThread(&error) == nullptr) {
    status.reason = "io_uring unavailable (" + ErrnoText(error) +
                    "; seccomp, kernel.io_uring_disabled or a container "
                    "policy)";
    return;
  }
  status.available = true;
  offload_[static_cast<size_t>(family)].store(!status.cpu_software);
  if (status.Usable(force)) Arm();
}

std::optional<Handoff> Service::Admit(Alg alg) const {
  if (!Armed()) return Handoff::kForked;
  const int64_t until =
      health_[static_cast<size_t>(alg)].resting_until_ns.load(
          std::memory_order_relaxed);
  if (until != 0 && NowNs() < until) return Handoff::kUnhealthy;
  return std::nullopt;
}

void Service::Report(Alg alg, const Outcome &outcome) {
  Health &health = health_[static_cast<size_t>(alg)];
  if (outcome.ok()) {
    if (health.failures.load(std::memory_order_relaxed) != 0) {
      health.failures.store(0, std::memory_order_relaxed);
      health.resting_until_ns.store(0, std::memory_order_relaxed);
    }
    return;
  }
  if (!outcome.Unhealthy()) return;
  const uint32_t failures =
      health.failures.fetch_add(1, std::memory_order_relaxed) + 1;
  const int64_t rest = backoff_base_ns_.load(std::memory_order_relaxed)
                       << std::min<uint32_t>(failures - 1, 6);
  health.resting_until_ns.store(NowNs() + std::max<int64_t>(rest, 1),
                                std::memory_order_relaxed);
}

void Service::SetBackoffForTesting(std::chrono::milliseconds base) {
  backoff_base_ns_.store(
      std::chrono::duration_cast<std::chrono::nanoseconds>(base).count());
}

void Service::ResetHealthForTesting() {
  for (Health &health : health_) {
    health.failures.store(0);
    health.resting_until_ns.store(0);
  }
}

}  // namespace aesmux::afalg
