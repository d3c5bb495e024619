// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/afalg/afalg_support.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/if_alg.h>
#include <linux/seccomp.h>
#include <liburing.h>
#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace aesmux::test {
namespace {

// The architecture whose system calls a filter looks at: a filter that
// checked another would let every call through.
#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "InstallSeccompFilter needs this architecture's AUDIT_ARCH_*"
#endif

}  // namespace

std::string AfalgUnavailableReason() {
  static const std::string reason = [] () -> std::string {
    const int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::string("socket(AF_ALG): ") + std::strerror(errno);
    sockaddr_alg address{};
    address.salg_family = AF_ALG;
    std::strcpy(reinterpret_cast<char *>(address.salg_type), "skcipher");
    std::strcpy(reinterpret_cast<char *>(address.salg_name), "cbc(aes)");
    const int bound =
        bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address));
    const int bind_errno = errno;
    close(fd);
    if (bound != 0) {
      return std::string("bind cbc(aes): ") + std::strerror(bind_errno);
    }
    io_uring ring;
    if (const int ret = io_uring_queue_init(4, &ring, 0); ret < 0) {
      return std::string("io_uring: ") + std::strerror(-ret);
    }
    io_uring_queue_exit(&ring);
    return {};
  }();
  return reason;
}

bool InstallSeccompFilter(Deny action, bool af_alg_socket,
                          const std::vector<long> &syscalls) {
  const uint32_t deny = action == Deny::kKill
                            ? SECCOMP_RET_KILL_PROCESS
                            : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  std::vector<sock_filter> program = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
  };
  for (const long nr : syscalls) {
    program.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                               static_cast<uint32_t>(nr), 0, 1));
    program.push_back(BPF_STMT(BPF_RET | BPF_K, deny));
  }
  if (af_alg_socket) {
    program.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3));
    program.push_back(
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));
    program.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_ALG, 0, 1));
    program.push_back(BPF_STMT(BPF_RET | BPF_K, deny));
  }
  program.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  sock_fprog fprog{static_cast<unsigned short>(program.size()),
                   program.data()};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) == 0;
}

std::string SeccompUnavailableReason() {
  static const std::string reason = [] {
    // In a child: a filter lasts for the rest of the process.
    const std::string result = RunInChild([] {
      return InstallSeccompFilter(Deny::kEperm, false, {}) ? 0 : errno;
    });
    const std::string exited = "child exited with ";
    if (!result.starts_with(exited)) return result;
    // qemu's user emulation, for one, refuses PR_SET_SECCOMP (EINVAL).
    return "prctl(PR_SET_SECCOMP): " +
           std::string(std::strerror(std::atoi(result.c_str() + exited.size())));
  }();
  return reason;
}

std::vector<long> AfalgSyscalls() {
  return {__NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
          __NR_accept,         __NR_accept4,        __NR_bind,
          __NR_setsockopt,     __NR_eventfd2,       __NR_sendmsg,
          __NR_recvmsg};
}

std::unique_ptr<ProviderEnv> LoadAfalgEnv(std::vector<std::string> settings) {
  for (const char *name :
       {"AESMUX_AFALG", "AESMUX_AFALG_FORK", "AESMUX_KERNELS"}) {
    unsetenv(name);
  }
  for (const char *family : {"ECB", "CBC", "CTR", "XTS", "GCM"}) {
    for (const char *suffix : {"_AFALG", "_AFALG_MIN_LEN", "_FALLBACK_MAX_LEN"}) {
      unsetenv((std::string("AESMUX_") + family + suffix).c_str());
    }
  }
  return std::make_unique<ProviderEnv>(settings);
}

std::string AfalgReport(const ProviderEnv &env, const std::string &family) {
  const std::string key = "afalg." + family;
  OSSL_PARAM probe[] = {OSSL_PARAM_utf8_string(key.c_str(), nullptr, 0),
                        OSSL_PARAM_END};
  if (!OSSL_PROVIDER_get_params(env.aesmux(), probe)) return {};
  std::string text(probe[0].return_size + 1, '\0');
  OSSL_PARAM fetch[] = {
      OSSL_PARAM_utf8_string(key.c_str(), text.data(), text.size()),
      OSSL_PARAM_END};
  if (!OSSL_PROVIDER_get_params(env.aesmux(), fetch)) return {};
  text.resize(fetch[0].return_size);
  return text;
}

Bytes EvpCrypt(const EVP_CIPHER *cipher, const Bytes &key, const Bytes &iv,
               const Bytes &in, bool encrypt, const std::vector<size_t> &splits,
               bool in_place) {
  auto ctx = NewCipherCtx();
  Bytes buffer = in;
  buffer.resize(in.size() + 32);
  Bytes out(in.size() + 32);
  uint8_t *dst = in_place ? buffer.data() : out.data();
  const uint8_t *src = buffer.data();
  if (!EVP_CipherInit_ex2(ctx.get(), cipher, key.data(),
                          iv.empty() ? nullptr : iv.data(), encrypt,
                          nullptr)) {
    return {};
  }
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  size_t done = 0;
  size_t produced = 0;
  auto update = [&](size_t len) {
    int out_len = 0;
    if (!EVP_CipherUpdate(ctx.get(), dst + produced, &out_len, src + done,
                          static_cast<int>(len))) {
      return false;
    }
    done += len;
    produced += static_cast<size_t>(out_len);
    return true;
  };
  for (size_t split : splits) {
    if (done + split > in.size()) break;
    if (!update(split)) return {};
  }
  if (done < in.size() && !update(in.size() - done)) return {};
  int out_len = 0;
  if (!EVP_CipherFinal_ex(ctx.get(), dst + produced, &out_len)) return {};
  produced += static_cast<size_t>(out_len);
  return Bytes(dst, dst + produced);
}

std::vector<size_t> RandomSplits(std::mt19937_64 &rng, size_t len,
                                 size_t block) {
  std::vector<size_t> splits;
  size_t left = len;
  while (left > block && splits.size() < 3 && rng() % 2 == 0) {
    size_t piece = rng() % left;
    if (block > 1) piece -= piece % block;
    if (piece == 0) break;
    splits.push_back(piece);
    left -= piece;
  }
  return splits;
}

std::vector<int> RunJobs(int jobs, int (*fn)(void *), std::vector<void *> args) {
  std::vector<ASYNC_JOB *> handles(jobs, nullptr);
  std::vector<ASYNC_WAIT_CTX *> waits(jobs);
  std::vector<int> results(jobs, -1);
  std::vector<bool> started(jobs, false);
  for (int j = 0; j < jobs; ++j) waits[j] = ASYNC_WAIT_CTX_new();
  int running = jobs;
  while (running > 0) {
    // Every paused job's wait fd, waited for together.
    std::vector<pollfd> fds;
    std::vector<int> owners;
    for (int j = 0; j < jobs; ++j) {
      size_t count = 0;
      if (results[j] != -1 || !started[j]) continue;
      ASYNC_WAIT_CTX_get_all_fds(waits[j], nullptr, &count);
      if (count != 1) continue;
      OSSL_ASYNC_FD fd;
      ASYNC_WAIT_CTX_get_all_fds(waits[j], &fd, &count);
      fds.push_back({fd, POLLIN, 0});
      owners.push_back(j);
    }
    std::vector<bool> ready(jobs, true);
    if (!fds.empty() && fds.size() == static_cast<size_t>(running)) {
      if (poll(fds.data(), fds.size(), -1) < 0) break;
      for (size_t i = 0; i < fds.size(); ++i) {
        ready[owners[i]] = (fds[i].revents & POLLIN) != 0;
      }
    }
    for (int j = 0; j < jobs; ++j) {
      if (results[j] != -1 || !ready[j]) continue;
      started[j] = true;
      int ret = 0;
      switch (ASYNC_start_job(&handles[j], waits[j], &ret, fn, &args[j],
                              sizeof(void *))) {
        case ASYNC_FINISH:
          results[j] = ret;
          --running;
          break;
        case ASYNC_PAUSE:
          break;
        default:
          results[j] = 0;
          --running;
      }
    }
  }
  for (ASYNC_WAIT_CTX *wait : waits) ASYNC_WAIT_CTX_free(wait);
  return results;
}

std::string AskVmHost(const std::string &request) {
  const char *port = std::getenv("AFALG_VM_CONTROL");
  if (port == nullptr || *port == '\0') return {};
  const int fd = open(port, O_RDWR | O_CLOEXEC);
  if (fd < 0) return {};
  const std::string line = request + "\n";
  std::string answer;
  if (write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())) {
    char c;
    while (read(fd, &c, 1) == 1 && c != '\n') answer += c;
  }
  close(fd);
  return answer;
}

std::optional<uint64_t> DeviceRequests() {
  const std::string answer = AskVmHost("count test");
  if (!answer.starts_with("ok ")) return std::nullopt;
  return std::strtoull(answer.c_str() + 3, nullptr, 10);
}

}  // namespace aesmux::test
