// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The OpenSSL side of bench/peer's EVP benchmarks (peer_bench,
// evp_floor_bench): peer_bench_boringssl started as a child and driven over
// a pipe, and sides (local Records or that child) timed in alternating
// batches, cell by cell, under the same machine load.
#ifndef AESMUX_TESTS_PEER_PEER_DRIVER_H_
#define AESMUX_TESTS_PEER_PEER_DRIVER_H_

#include <openssl/evp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "bench/peer/peer_records.h"
#include "bench/support/bench_util.h"

extern char **environ;

namespace aesmux::test {

// BoringSSL's OPENSSL_ia32cap for a tier: "~A:~B" clears bits A of CPUID
// leaf 1 (EDX, ECX) and B of leaf 7 (EBX, ECX), as its cpu_intel.cc reads
// it. Leaf 7 EBX bit 30 is AVX512BW (BoringSSL's AVX-512 GCM needs it),
// ECX bits 9 and 10 are VAES and VPCLMULQDQ.
inline std::string BoringCpuMask(const std::string &tier) {
  if (tier == "vaes_avx2") return "~0:~0x40000000";
  if (tier == "aesni") return "~0:~0x0000060040000000";
  return "";
}

// peer_bench_boringssl as a child with pipes to its stdin and stdout.
class Peer {
 public:
  Peer(const std::string &path, const std::string &cpu_mask) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) Die("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    posix_spawn_file_actions_addclose(&actions, to_child[1]);
    posix_spawn_file_actions_addclose(&actions, from_child[0]);
    std::vector<std::string> env_storage;
    for (char **e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "OPENSSL_ia32cap=", 16) != 0) {
        env_storage.emplace_back(*e);
      }
    }
    if (!cpu_mask.empty()) env_storage.push_back("OPENSSL_ia32cap=" + cpu_mask);
    std::vector<char *> envp;
    for (std::string &e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string arg0 = path;
    char *argv[] = {arg0.data(), nullptr};
    const int err =
        posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (err != 0) Die("cannot start " + path + ": " + std::strerror(err));
    close(to_child[0]);
    close(from_child[1]);
    to_ = fdopen(to_child[1], "w");
    from_ = fdopen(from_child[0], "r");
    if (to_ == nullptr || from_ == nullptr) Die("fdopen");
  }
  ~Peer() {
    std::fclose(to_);
    std::fclose(from_);
    waitpid(pid_, nullptr, 0);
  }
  Peer(const Peer &) = delete;
  Peer &operator=(const Peer &) = delete;

  std::string Ask(const std::string &command) {
    std::fprintf(to_, "%s\n", command.c_str());
    std::fflush(to_);
    char line[256];
    if (std::fgets(line, sizeof(line), from_) == nullptr) {
      Die("peer_bench_boringssl stopped answering");
    }
    std::string answer(line);
    while (!answer.empty() && answer.back() == '\n') answer.pop_back();
    return answer;
  }

 private:
  pid_t pid_ = -1;
  FILE *to_ = nullptr;
  FILE *from_ = nullptr;
};

// One side of a cell: a local Records or the peer.
class Side {
 public:
  explicit Side(Records *local) : local_(local) {}
  explicit Side(Peer *peer) : peer_(peer) {}

  double Seconds(long calls) {
    if (local_) return local_->Seconds(calls);
    return std::stod(peer_->Ask("time " + std::to_string(calls)));
  }

  // Records per batch of about `seconds`.
  long Calibrate(double seconds) {
    Seconds(1);
    long calls = 1;
    for (;;) {
      const double t = Seconds(calls);
      if (t >= seconds / 4 || calls > (1L << 26)) {
        return std::max(1L, static_cast<long>(calls * seconds / t));
      }
      calls *= 4;
    }
  }

 private:
  Records *local_ = nullptr;  // not owned
  Peer *peer_ = nullptr;
};

inline double TicksPerSecond() {
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  const uint64_t t0 = __rdtsc();
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 50e6);
  const uint64_t t1 = __rdtsc();
  return (t1 - t0) / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
}

// The options both EVP benches take. AESMUX_PEER_BORINGSSL, the path of
// peer_bench_boringssl, comes from CMake.
struct PeerOptions {
  std::string tier;  // empty: each side's own choice
  std::vector<int> key_bits = {128, 256};
  std::vector<int> sizes = {16, 256, 1344, 8192, 16384};
  int runs = 7;
  double batch_ms = 20;
  std::string peer = AESMUX_PEER_BORINGSSL;

  // Takes args' current option if it is one of these (--tier, --key-bits,
  // --sizes, --runs, --ms, --peer); false if it is not.
  bool Read(ArgReader &args) {
    const std::string &arg = args.arg();
    if (arg == "--tier") {
      tier = args.Value();
    } else if (arg == "--key-bits") {
      key_bits = ParseList(args.Value());
    } else if (arg == "--sizes") {
      sizes = ParseList(args.Value());
    } else if (arg == "--runs") {
      runs = args.Int(1);
    } else if (arg == "--ms") {
      batch_ms = args.Double(1);
    } else if (arg == "--peer") {
      peer = args.Value();
    } else {
      return false;
    }
    return true;
  }

  // Dies on values no bench can use.
  void Check() const {
    for (int bits : key_bits) {
      if (bits != 128 && bits != 256) Die("--key-bits: 128 and 256 only");
    }
    if (key_bits.empty() || sizes.empty()) {
      Die("--key-bits and --sizes need at least one value");
    }
    for (int size : sizes) {
      if (size <= 0) Die("sizes must be positive");
    }
    if (!tier.empty() && tier != "vaes_avx512" && BoringCpuMask(tier).empty()) {
      Die("--tier: vaes_avx512, vaes_avx2 or aesni");
    }
  }
};

// Median MB/s of each side over `runs` alternating batches of about
// `batch_ms` of CPU time (the order rotating from run to run) and the
// medians of sides[0]'s per-run ratios to each side (sides[0] / side).
struct Medians {
  std::vector<double> mbps;
  std::vector<double> ratio;
};
inline Medians Measure(const std::vector<Side *> &sides, size_t bytes,
                       int runs, double batch_ms) {
  std::vector<long> calls;
  for (Side *side : sides) calls.push_back(side->Calibrate(batch_ms * 1e-3));
  std::vector<std::vector<double>> mbps(sides.size()), ratio(sides.size());
  for (int r = 0; r < runs; ++r) {
    std::vector<double> run(sides.size());
    for (size_t k = 0; k < sides.size(); ++k) {
      const size_t s = (k + r) % sides.size();
      run[s] = calls[s] * bytes / sides[s]->Seconds(calls[s]) / 1e6;
    }
    for (size_t s = 0; s < sides.size(); ++s) {
      mbps[s].push_back(run[s]);
      ratio[s].push_back(run[0] / run[s]);
    }
  }
  Medians m;
  for (size_t s = 0; s < sides.size(); ++s) {
    m.mbps.push_back(Median(mbps[s]));
    m.ratio.push_back(Median(ratio[s]));
  }
  return m;
}

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_PEER_PEER_DRIVER_H_
