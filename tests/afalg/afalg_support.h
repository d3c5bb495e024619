// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Support for the afalg suites: whether this kernel can run the path, a
// child process per test that changes process state (seccomp filters,
// forks), and EVP helpers.
#ifndef AESMUX_TESTS_AFALG_AFALG_SUPPORT_H_
#define AESMUX_TESTS_AFALG_AFALG_SUPPORT_H_

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/support/bytes.h"
#include "tests/support/child.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

// Why this machine cannot run the afalg path (empty if it can): AF_ALG
// socket and bind of cbc(aes), then an io_uring ring.
std::string AfalgUnavailableReason();

#define SKIP_WITHOUT_AFALG()                                              \
  do {                                                                    \
    if (const std::string reason = ::aesmux::test::AfalgUnavailableReason(); \
        !reason.empty()) {                                                \
      GTEST_SKIP() << "no afalg path on this kernel: " << reason;         \
    }                                                                     \
  } while (0)

// Installs a seccomp filter in this process (for good): socket(AF_ALG, …)
// when `af_alg_socket`, and each of `syscalls`, either kill the process or
// fail with EPERM; everything else is allowed.
enum class Deny { kKill, kEperm };
bool InstallSeccompFilter(Deny action, bool af_alg_socket,
                          const std::vector<long> &syscalls);
// Why this process cannot install a seccomp filter (empty if it can).
std::string SeccompUnavailableReason();

#define SKIP_WITHOUT_SECCOMP()                                                \
  do {                                                                        \
    if (const std::string reason = ::aesmux::test::SeccompUnavailableReason(); \
        !reason.empty()) {                                                    \
      GTEST_SKIP() << "no seccomp filters here: " << reason;                 \
    }                                                                         \
  } while (0)

// Every syscall the afalg path can make after init other than socket():
// io_uring_*, accept/accept4, bind, setsockopt, eventfd2, sendmsg/recvmsg.
std::vector<long> AfalgSyscalls();

// aesmux and the default provider in a private library context, with the
// afalg path forced (or as `settings` say) and environment overrides
// removed.
std::unique_ptr<ProviderEnv> LoadAfalgEnv(std::vector<std::string> settings = {
                                              "afalg = force"});

// The afalg.<family> parameter as text: the probe's state and what
// happened on the path since (the pointer form has the state alone).
std::string AfalgReport(const ProviderEnv &env, const std::string &family);

// EVP encryption or decryption of `in` in updates of the given sizes (the
// rest in a last update), without padding, in place or not.
Bytes EvpCrypt(const EVP_CIPHER *cipher, const Bytes &key, const Bytes &iv,
               const Bytes &in, bool encrypt, const std::vector<size_t> &splits,
               bool in_place);

// A few random split points for `len` bytes (sizes of updates).
std::vector<size_t> RandomSplits(std::mt19937_64 &rng, size_t len,
                                 size_t block);

// Runs `jobs` ASYNC jobs of `fn` (each given its entry of `args`) to
// completion the way openssl speed does: start them all, then resume those
// whose wait fd is readable (waiting for it without a time limit, as an
// application does). Returns the jobs' results.
std::vector<int> RunJobs(int jobs, int (*fn)(void *), std::vector<void *> args);

// In the guest of the VM suites (scripts/afalg-vm-common.sh), the host's
// side of its control port: asks `request` ("count LABEL", "device_del
// ID") and returns the answer ("ok …", "error …"); "" outside such a guest
// (no AFALG_VM_CONTROL) or if the host does not answer.
std::string AskVmHost(const std::string &request);
// The requests the virtio-crypto device completed on its data queue so
// far, as QEMU counts them; nullopt outside such a guest.
std::optional<uint64_t> DeviceRequests();

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_AFALG_AFALG_SUPPORT_H_
