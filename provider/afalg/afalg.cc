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
#include <cstdio>
#include <cstring>

#include "provider/afalg/bounce.h"
#include "provider/afalg/fault.h"
#include "provider/afalg/fd_budget.h"
#include "provider/afalg/kernel_crypto.h"
#include "provider/afalg/known_answers.h"
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
  if (!outranked.empty()) {
    text += ", bound by its driver name over " + outranked +
            ", which a bind by the algorithm's name gets";
  }
  text += "; keys of";
  for (size_t i = 0; i < key_lens.size(); ++i) {
    text += (i == 0 ? " " : i + 1 == key_lens.size() ? " and " : ", ") +
            std::to_string(key_lens[i]);
  }
  text += " bytes";
  if (!key_notes.empty()) text += "; not " + key_notes;
  text += ")";
  return text;
}

bool FamilyStatus::KeyUsable(size_t key_len) const {
  return std::find(key_lens.begin(), key_lens.end(), key_len) !=
         key_lens.end();
}

KernelAlgorithm KernelAlgorithmFor(Family family) {
  const core::FamilyInfo &info = core::Info(family);
  return {info.kernel_type.data(), info.kernel_name.data()};
}

// ---------------------------------------------------------------- Service

namespace {
// Under core::InitLock, which fork() waits for: a mutex of its own, held
// by a thread loading or unloading an instance at a fork, would hang the
// child at its own unload or exit.
size_t g_service_users = 0;
std::atomic<Service *> g_service{nullptr};
}  // namespace

Service &Service::Get() {
  Service *service = g_service.load(std::memory_order_acquire);
  assert(service != nullptr && "afalg::Service used outside a provider");
  return *service;
}

void Service::Acquire() {
  core::InitLock lock;
  // Counted once made: if making it throws std::bad_alloc, nothing was
  // acquired (the instance is not made) and the next Acquire makes it.
  if (g_service_users == 0) {
    g_service.store(new Service, std::memory_order_release);
  }
  ++g_service_users;
}

void Service::Release() {
  core::InitLock lock;
  assert(g_service_users > 0);
  if (--g_service_users == 0) {
    delete g_service.exchange(nullptr, std::memory_order_acq_rel);
  }
}

FamilyStatus Service::status(Family family) const {
  core::InitLock lock;
  return status_[static_cast<size_t>(family)];
}

std::string Service::BindName(Family family) const {
  core::InitLock lock;
  return status_[static_cast<size_t>(family)].bind_name;
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

  // Under auto the probe may run late (route/router.h), in a process that
  // may have entered a sandbox since: one that denies the read may kill
  // for a socket() call, so auto goes no further than the listing when it
  // shows no offload driver. Under force the listing only says which
  // driver to bind.
  const int listing = ReadProcCrypto();
  if (!force) {
    if (listing != 0) {
      status.listing_only = true;
      status.reason = "cannot read /proc/crypto (" + ErrnoText(listing) +
                      "), so cannot tell an offload driver from CPU software";
      return;
    }
    if (!BestOffloadImplementation(proc_crypto_, kernel.name, kernel.type)) {
      status.listing_only = true;
      const std::optional<CryptoAlg> best =
          BestImplementation(proc_crypto_, kernel.name, kernel.type);
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
  if (const int ret = BindForProbe(tfm.get(), family, force, status);
      ret != 0) {
    status.reason = "bind " + std::string(kernel.type) + " " +
                    status.bind_name + ": " + ErrnoText(ret);
    if (ret == -ENOENT) {
      status.reason += restrict_level.value_or(0) == 1
                           ? " (not on af_alg_restrict's allowlist, or no "
                             "implementation)"
                           : " (no implementation)";
    }
    return;
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
  CheckKeySizes(tfm.get(), family, status);
  if (status.key_lens.empty()) {
    status.reason = status.driver + " passed no key size: " + status.key_notes;
    return;
  }
  status.available = true;
  offload_[static_cast<size_t>(family)].store(!status.cpu_software);
  driver_names_.push_front(status.cpu_software ? std::string()
                                               : status.driver);
  watched_driver_[static_cast<size_t>(family)].store(&driver_names_.front(),
                                                     std::memory_order_release);
  if (status.Usable(force)) Arm();
}

int Service::BindForProbe(int tfm, Family family, bool force,
                          FamilyStatus &status) {
  const KernelAlgorithm kernel = KernelAlgorithmFor(family);
  // An offload driver by its own name: a bind by the algorithm's name gets
  // the implementation of highest priority, often CPU software.
  if (proc_crypto_read_) {
    if (const std::optional<CryptoAlg> offload = BestOffloadImplementation(
            proc_crypto_, kernel.name, kernel.type)) {
      status.bind_name = offload->driver;
      const int ret = BindAlgorithm(tfm, kernel.type, status.bind_name);
      if (ret == 0) {
        status.driver = offload->driver;
        status.priority = offload->priority;
        status.async = offload->async;
        const std::optional<CryptoAlg> best =
            BestImplementation(proc_crypto_, kernel.name, kernel.type);
        if (best.has_value() && best->driver != offload->driver) {
          status.outranked = best->driver + " (priority " +
                             std::to_string(best->priority) + ")";
        }
        return 0;
      }
      if (!force) return ret;
    }
  }
  status.bind_name = kernel.name;
  if (const int ret = BindAlgorithm(tfm, kernel.type, status.bind_name);
      ret != 0) {
    return ret;
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
  return 0;
}

namespace {

uint8_t HexDigit(char c) {
  return static_cast<uint8_t>(c <= '9' ? c - '0' : c - 'a' + 10);
}

}  // namespace

void Service::CheckKeySizes(int tfm, Family family, FamilyStatus &status) {
  const bool aead = family == Family::kGcm;
  int error = 0;
  Ring *ring = Ring::ForThisThread(&error);
  const KernelAlgorithm kernel = KernelAlgorithmFor(family);
  bool first = true;
  for (const KnownAnswer &answer : kKnownAnswers) {
    if (answer.family != family) continue;
    const std::string size = std::to_string(answer.key_len) + "-byte keys";
    auto refuse = [&](const std::string &why) {
      status.key_notes += (status.key_notes.empty() ? "" : "; ") + size +
                          ": " + why;
    };
    UniqueFd own;
    if (!first) {
      own = UniqueFd(socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
      const int ret = own.valid() ? BindAlgorithm(own.get(), kernel.type,
                                                  status.bind_name)
                                  : -errno;
      if (ret != 0) {
        refuse("socket: " + ErrnoText(ret));
        continue;
      }
    }
    const int keyed = first ? tfm : own.get();
    first = false;
    uint8_t key[64];
    for (size_t i = 0; i < answer.key_len; ++i) key[i] = static_cast<uint8_t>(i);
    if (const int ret = SetSocketKey(keyed, family, {key, answer.key_len});
        ret != 0) {
      refuse("refused (" + ErrnoText(ret) + ")");
      continue;
    }
    UniqueFd op(accept4(keyed, nullptr, nullptr, SOCK_CLOEXEC));
    if (!op.valid()) {
      refuse("accept: " + ErrnoText(-errno));
      continue;
    }
    int sndbuf = 0;
    socklen_t sndbuf_len = sizeof(sndbuf);
    if (getsockopt(op.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf, &sndbuf_len) ==
            0 &&
        sndbuf > 0) {
      const size_t usable = std::max<size_t>(
          static_cast<size_t>(sndbuf) & ~size_t{4095}, 4096);
      max_request_.store(
          std::min({max_request_.load(), usable, kLargestRequest}));
    }
    uint8_t in[16];
    std::memcpy(in, kKnownAnswerInput.data(), sizeof(in));
    uint8_t out[32] = {};
    const uint8_t iv[16] = {};
    Request request;
    request.op_fd = op.get();
    request.tx[0] = {in, sizeof(in)};
    request.rx[0] = {out, answer.output.size() / 2};
    request.rx_count = 1;
    PrepareSend(request, ALG_OP_ENCRYPT, iv,
                family == Family::kEcb ? 0 : aead ? 12 : 16, aead ? 0 : -1, 1);
    request.punt = !status.cpu_software;
    request.family = static_cast<int>(family);
    const int ret = ring != nullptr ? ring->RunNow(request) : error;
    if (ret < 0 || request.result < 0) {
      refuse("a request failed (" + ErrnoText(ret < 0 ? ret : request.result) +
             ")");
      continue;
    }
    bool right = static_cast<size_t>(request.result) == answer.output.size() / 2;
    for (size_t i = 0; right && i < answer.output.size() / 2; ++i) {
      right = out[i] == (HexDigit(answer.output[2 * i]) << 4 |
                         HexDigit(answer.output[2 * i + 1]));
    }
    if (!right || TakeFault(Fault::kProbeAnswer, answer.key_len) != 0) {
      refuse("wrong answer to a known-answer test");
      continue;
    }
    status.key_lens.push_back(answer.key_len);
  }
}

std::optional<Handoff> Service::Admit(Alg alg, bool fork_rebuild) const {
  if (!Armed(fork_rebuild)) return Handoff::kForked;
  if (gone(core::Info(alg).family)) return Handoff::kDriverGone;
  const int64_t until =
      health_[static_cast<size_t>(alg)].resting_until_ns.load(
          std::memory_order_relaxed);
  if (until != 0 && NowNs() < until) return Handoff::kUnhealthy;
  return std::nullopt;
}

void Service::Report(Alg alg, const Outcome &outcome) {
  AlgHealth &health = health_[static_cast<size_t>(alg)];
  if (outcome.ok()) {
    if (health.failures.load(std::memory_order_relaxed) != 0) {
      health.failures.store(0, std::memory_order_relaxed);
      health.resting_until_ns.store(0, std::memory_order_relaxed);
    }
    return;
  }
  if (!outcome.Unhealthy()) return;
  health.failed.fetch_add(1, std::memory_order_relaxed);
  health.last_error.store(outcome.error, std::memory_order_relaxed);
  health.last_reason.store(static_cast<uint8_t>(outcome.reason),
                           std::memory_order_relaxed);
  const uint32_t failures =
      health.failures.fetch_add(1, std::memory_order_relaxed) + 1;
  const int64_t rest = backoff_base_ns_.load(std::memory_order_relaxed)
                       << std::min<uint32_t>(failures - 1, 6);
  health.resting_until_ns.store(NowNs() + std::max<int64_t>(rest, 1),
                                std::memory_order_relaxed);
}

namespace {
std::array<std::atomic<uint32_t>, core::kNumFamilies> g_driver_epoch{};
}  // namespace

uint32_t DriverEpoch(Family family) {
  return g_driver_epoch[static_cast<size_t>(family)].load(
      std::memory_order_acquire);
}

bool DriverGoneSince(Family family, uint32_t epoch) {
  return DriverEpoch(family) != epoch;
}

void Service::NoteKeyRefused(Family family, int error) {
  const auto f = static_cast<size_t>(family);
  keys_refused_[f].fetch_add(1, std::memory_order_relaxed);
  key_error_[f].store(error, std::memory_order_relaxed);
}

bool Service::DriverListed(Family family) noexcept {
  const auto f = static_cast<size_t>(family);
  if (gone_[f].load()) return false;
  const std::string *driver =
      watched_driver_[f].load(std::memory_order_acquire);
  // Not probed, or CPU software: it does not go away.
  if (driver == nullptr || driver->empty()) return true;
  bool listed = true;
  // Unreadable now: no news, so no verdict.
  if (ListsDriver("/proc/crypto", *driver, KernelAlgorithmFor(family).type,
                  &listed) != 0 ||
      listed) {
    return true;
  }
  if (!gone_[f].exchange(true)) {
    g_driver_epoch[f].fetch_add(1, std::memory_order_acq_rel);
  }
  return false;
}

std::string Service::Health(Family family) const {
  const auto f = static_cast<size_t>(family);
  std::string text;
  auto add = [&](const std::string &part) {
    text += (text.empty() ? "" : "; ") + part;
  };
  const std::string *watched =
      watched_driver_[f].load(std::memory_order_acquire);
  const std::string driver = watched != nullptr ? *watched : std::string();
  if (gone(family)) {
    const uint32_t lost = lost_[f].load(std::memory_order_relaxed);
    add(driver + " left /proc/crypto (its device was removed): " +
        std::to_string(lost) + " request" + (lost == 1 ? "" : "s") +
        " it never completed ran on the CPU; off until aesmux is loaded "
        "again");
  }
  if (const uint32_t refused = keys_refused_[f].load(); refused != 0) {
    add(std::to_string(refused) + " key" + (refused == 1 ? "" : "s") +
        " refused by the driver (" +
        ErrnoText(key_error_[f].load(std::memory_order_relaxed)) +
        "; an engine out of sessions?), served on the CPU");
  }
  const int64_t now = NowNs();
  for (const core::AlgInfo &info : core::kAlgs) {
    if (info.family != family) continue;
    const AlgHealth &health = health_[static_cast<size_t>(info.alg)];
    const uint32_t failed = health.failed.load(std::memory_order_relaxed);
    if (failed == 0) continue;
    std::string part =
        std::string(info.name) + ": " + std::to_string(failed) +
        " failed request" + (failed == 1 ? "" : "s") + " ran on the CPU (last " +
        std::string(core::HandoffName(static_cast<Handoff>(
            health.last_reason.load(std::memory_order_relaxed)))) +
        ", " + ErrnoText(health.last_error.load(std::memory_order_relaxed)) +
        ")";
    const int64_t until = health.resting_until_ns.load();
    if (until > now) {
      char rest[32];
      std::snprintf(rest, sizeof(rest), "%.1f", (until - now) / 1e9);
      part += ", resting " + std::string(rest) + " s more";
    }
    add(part);
  }
  return text;
}

void Service::SetBackoffForTesting(std::chrono::milliseconds base) {
  backoff_base_ns_.store(
      std::chrono::duration_cast<std::chrono::nanoseconds>(base).count());
}

void Service::ResetHealthForTesting() {
  for (AlgHealth &health : health_) {
    health.failures.store(0);
    health.failed.store(0);
    health.resting_until_ns.store(0);
  }
  for (std::atomic<uint32_t> &refused : keys_refused_) refused.store(0);
}

}  // namespace aesmux::afalg
