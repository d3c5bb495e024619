// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/afalg/afalg_support.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/if_alg.h>
#include <linux/seccomp.h>
#include <liburing.h>
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

}  // namespace aesmux::test
