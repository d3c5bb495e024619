// peer_bench: AES records through EVP_CIPHER on aesmux, OpenSSL's default
// provider and BoringSSL, the same calls on each. Not a test.
//
// This one source builds two programs (tests/peer/CMakeLists.txt):
// peer_bench against OpenSSL (aesmux and the default provider in a private
// library context) and peer_bench_boringssl against BoringSSL, whose
// headers and symbols clash with OpenSSL's. peer_bench starts
// peer_bench_boringssl as a child and drives it over a pipe (Serve), so
// that the three sides run in alternating batches, cell by cell, under the
// same machine load; with taskset the child inherits the CPU.
//
// One record, on a context whose key was set once:
//   GCM:      EVP_CipherInit_ex(IV), EVP_CipherUpdate(13 bytes of AAD),
//             EVP_CipherUpdate(payload), [decryption: EVP_CTRL_AEAD_SET_TAG],
//             EVP_CipherFinal_ex, [encryption: EVP_CTRL_AEAD_GET_TAG]
//   CBC, CTR, XTS: EVP_CipherInit_ex(IV), EVP_CipherUpdate, EVP_CipherFinal_ex
//   ECB:      EVP_CipherUpdate, EVP_CipherFinal_ex
// (padding off). Time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so
// that other processes on a shared machine do not count; cycles per byte
// convert it with the core clock measured at start (TSC rate times
// tests/support/cycle_clock.h's cycles per tick). Before a cell is timed,
// every side's output is checked
// against the default provider's. BoringSSL keeps XTS in libdecrepit,
// unoptimised, so XTS runs on aesmux and the default provider only and is
// compared with the CPU's bound and with aesmux's CTR on the same sizes.
//
// Tiers: --tier NAME gives aesmux `kernels = NAME` and masks BoringSSL's
// CPUID bits through its OPENSSL_ia32cap variable in the child, so that
// BoringSSL runs the same class of code: vaes_avx2 clears AVX512BW (its
// GCM then takes aes_gcm_*_update_vaes_avx2), aesni also VAES and
// VPCLMULQDQ. Without --tier both pick their best.
//
//   peer_bench [--tier NAME] [--modes gcm,ctr,cbc,ecb,xts] [--key-bits 128,256]
//              [--sizes 16,256,1344,8192,16384] [--runs 7] [--ms 20]
//              [--peer PATH]
#include <openssl/evp.h>

#include <x86intrin.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/bench_util.h"
#include "tests/support/cycle_clock.h"

#ifndef OPENSSL_IS_BORINGSSL
#include <openssl/crypto.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>

#include "tests/support/provider_env.h"

extern char **environ;
#endif

namespace aesmux::test {

#ifdef OPENSSL_IS_BORINGSSL
const char kBenchName[] = "peer_bench_boringssl";
#else
const char kBenchName[] = "peer_bench";
#endif

namespace {

// One column of the table: a mode, key size and direction.
struct Case {
  std::string mode;  // gcm, ctr, cbc, ecb, xts
  int bits;
  bool encrypt;

  std::string CipherName() const {
    return "AES-" + std::to_string(bits) + "-" + ToUpper(mode);
  }
  static std::string ToUpper(std::string s) {
    for (char &c : s) c = static_cast<char>(std::toupper(c));
    return s;
  }
};

struct CtxDeleter {
  void operator()(EVP_CIPHER_CTX *ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CtxPtr = std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter>;

constexpr uint8_t kIv[16] = {0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce,
                             0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88};
constexpr size_t kAadLen = 13;  // a TLS 1.2 record header

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

// The records of one cell on one side: a context keyed once, input, output
// and, for GCM decryption, the ciphertext and tag to verify.
class Records {
 public:
  Records(const EVP_CIPHER *cipher, const Case &c, size_t bytes)
      : case_(c), bytes_(bytes), in_(bytes), out_(bytes + 16) {
    uint8_t key[64];
    for (int i = 0; i < 64; ++i) key[i] = static_cast<uint8_t>(i * 29 + 3);
    for (size_t i = 0; i < kAadLen; ++i) aad_[i] = static_cast<uint8_t>(i);
    ctx_.reset(EVP_CIPHER_CTX_new());
    if (ctx_ == nullptr ||
        EVP_CipherInit_ex(ctx_.get(), cipher, nullptr, key, nullptr,
                          c.encrypt ? 1 : 0) != 1) {
      Die("cannot key " + c.CipherName());
    }
    EVP_CIPHER_CTX_set_padding(ctx_.get(), 0);
    if (c.mode == "gcm" && !c.encrypt) {
      // The ciphertext and tag of the records to open: the same key, IV
      // and AAD sealed once on a second context.
      CtxPtr seal(EVP_CIPHER_CTX_new());
      if (seal == nullptr ||
          EVP_CipherInit_ex(seal.get(), cipher, nullptr, key, nullptr, 1) != 1) {
        Die("cannot key " + c.CipherName());
      }
      std::swap(ctx_, seal);
      case_.encrypt = true;
      Run();
      case_.encrypt = false;
      std::swap(ctx_, seal);
      std::memcpy(in_.data, out_.data, bytes_);
      std::memcpy(expected_tag_, tag_, 16);
    }
  }

  // One record.
  void Run() {
    EVP_CIPHER_CTX *ctx = ctx_.get();
    int len = 0, final_len = 0;
    const int enc = case_.encrypt ? 1 : 0;
    if (case_.mode != "ecb" &&
        EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, kIv, enc) != 1) {
      Die("EVP_CipherInit_ex (IV)");
    }
    if (case_.mode == "gcm" &&
        EVP_CipherUpdate(ctx, nullptr, &len, aad_, kAadLen) != 1) {
      Die("EVP_CipherUpdate (AAD)");
    }
    if (EVP_CipherUpdate(ctx, out_.data, &len, in_.data,
                         static_cast<int>(bytes_)) != 1) {
      Die("EVP_CipherUpdate");
    }
    if (case_.mode == "gcm" && !case_.encrypt &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, expected_tag_) !=
            1) {
      Die("EVP_CTRL_AEAD_SET_TAG");
    }
    if (EVP_CipherFinal_ex(ctx, out_.data + len, &final_len) != 1) {
      Die("EVP_CipherFinal_ex");
    }
    if (case_.mode == "gcm" && case_.encrypt &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag_) != 1) {
      Die("EVP_CTRL_AEAD_GET_TAG");
    }
  }

  // A digest of what a record produces (output XOR-folded into a block,
  // and the tag), in hex: equal on every side or the sides disagree.
  std::string Digest() {
    Run();
    uint8_t fold[32] = {};
    for (size_t i = 0; i < bytes_; ++i) fold[i % 16] ^= out_.data[i];
    std::memcpy(fold + 16, tag_, 16);
    std::string hex;
    char byte[3];
    for (uint8_t b : fold) {
      std::snprintf(byte, sizeof(byte), "%02x", b);
      hex += byte;
    }
    return hex;
  }

  // Seconds of this thread's CPU time for `calls` records: time the
  // scheduler gives to other processes on a shared machine does not count.
  double Seconds(long calls) {
    const double start = ThreadCpuSeconds();
    for (long i = 0; i < calls; ++i) Run();
    return ThreadCpuSeconds() - start;
  }

 private:
  Case case_;
  size_t bytes_;
  Buffer in_, out_;
  uint8_t aad_[kAadLen];
  uint8_t tag_[16] = {};
  uint8_t expected_tag_[16] = {};
  CtxPtr ctx_;
};

#ifdef OPENSSL_IS_BORINGSSL

const EVP_CIPHER *BoringCipher(const Case &c) {
  const bool k128 = c.bits == 128;
  if (c.bits != 128 && c.bits != 256) return nullptr;
  if (c.mode == "gcm") return k128 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
  if (c.mode == "ctr") return k128 ? EVP_aes_128_ctr() : EVP_aes_256_ctr();
  if (c.mode == "cbc") return k128 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
  if (c.mode == "ecb") return k128 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  return nullptr;
}

// The child's side of the pipe, one command per line on stdin, one answer
// per line on stdout:
//   setup MODE BITS enc|dec BYTES -> "ok DIGEST" or "error WHAT"
//   time CALLS                    -> seconds of CPU time for CALLS records
void Serve() {
  std::unique_ptr<Records> records;
  char line[256];
  while (std::fgets(line, sizeof(line), stdin) != nullptr) {
    char mode[16], dir[8];
    int bits = 0;
    long bytes = 0, calls = 0;
    if (std::sscanf(line, "setup %15s %d %7s %ld", mode, &bits, dir, &bytes) ==
        4) {
      const Case c{mode, bits, std::strcmp(dir, "enc") == 0};
      const EVP_CIPHER *cipher = BoringCipher(c);
      if (cipher == nullptr) {
        records.reset();
        std::printf("error no %s in BoringSSL's EVP\n", c.CipherName().c_str());
      } else {
        records = std::make_unique<Records>(cipher, c, bytes);
        std::printf("ok %s\n", records->Digest().c_str());
      }
    } else if (std::sscanf(line, "time %ld", &calls) == 1 && records) {
      std::printf("%.9f\n", records->Seconds(calls));
    } else {
      std::printf("error bad command\n");
    }
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace aesmux::test

int main() {
  aesmux::test::Serve();
  return 0;
}

#else  // OpenSSL: the driver

struct Options {
  std::string tier;  // empty: aesmux's and BoringSSL's own choice
  std::vector<std::string> modes = {"gcm", "ctr", "cbc", "ecb", "xts"};
  std::vector<int> key_bits = {128, 256};
  std::vector<int> sizes = {16, 256, 1344, 8192, 16384};
  int runs = 7;
  double batch_ms = 20;
  std::string peer = AESMUX_PEER_BORINGSSL;
};

// BoringSSL's OPENSSL_ia32cap for a tier: "~A:~B" clears bits A of CPUID
// leaf 1 (EDX, ECX) and B of leaf 7 (EBX, ECX), as its cpu_intel.cc reads
// it. Leaf 7 EBX bit 30 is AVX512BW (BoringSSL's AVX-512 GCM needs it),
// ECX bits 9 and 10 are VAES and VPCLMULQDQ.
std::string BoringCpuMask(const std::string &tier) {
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
  Side(std::unique_ptr<Records> local) : local_(std::move(local)) {}
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
  std::unique_ptr<Records> local_;
  Peer *peer_ = nullptr;
};

double TicksPerSecond() {
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  const uint64_t t0 = __rdtsc();
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 50e6);
  const uint64_t t1 = __rdtsc();
  return (t1 - t0) / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
}

// The lower bound of a parallel mode on the VAES tiers: 4 AES block-rounds
// per core cycle (docs/kernel-notes.md), rounds / 64 cycles per byte.
double ParallelBound(int bits) { return (bits / 32 + 6) / 64.0; }

class Driver {
 public:
  explicit Driver(const Options &opt)
      : opt_(opt),
        env_(opt.tier.empty() ? std::vector<std::string>{}
                              : std::vector<std::string>{"kernels = " +
                                                         opt.tier}),
        peer_(opt.peer, BoringCpuMask(opt.tier)) {
    if (!env_.loaded()) Die("aesmux did not load: " + env_.error());
    ticks_per_second_ = TicksPerSecond();
    cycles_per_tick_ = CoreCyclesPerTick();
  }

  void Run() {
    std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof(date), "%Y-%m-%d", std::localtime(&now));
    std::printf("# %s · %s · core %.2f GHz (%.3f cycles per TSC tick)\n", date,
                CpuModelName().c_str(),
                ticks_per_second_ * cycles_per_tick_ / 1e9, cycles_per_tick_);
    std::printf("# %s; aesmux tier %s; BoringSSL OPENSSL_ia32cap=%s\n",
                OpenSSL_version(OPENSSL_VERSION),
                env_.ProviderParam("tier").c_str(),
                BoringCpuMask(opt_.tier).empty()
                    ? "(unset: its own choice)"
                    : BoringCpuMask(opt_.tier).c_str());
    std::printf("# median of %d alternating batches of ~%.0f ms per side; "
                "ratios are medians of the per-run ratios\n\n",
                opt_.runs, opt_.batch_ms);
    bool peer_table = false, xts_table = false;
    for (const std::string &mode : opt_.modes) {
      (mode == "xts" ? xts_table : peer_table) = true;
    }
    if (peer_table) {
      std::printf("| algorithm | bytes | BoringSSL MB/s | default MB/s | "
                  "aesmux MB/s | aesmux / BoringSSL | aesmux / default |\n");
      std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
      for (const std::string &mode : opt_.modes) {
        if (mode == "xts") continue;
        for (const Case &c : Cases(mode)) {
          for (int size : opt_.sizes) PeerRow(c, size);
        }
      }
    }
    if (xts_table) {
      std::printf("\n| algorithm | bytes | default MB/s | aesmux MB/s | "
                  "aesmux / default | aesmux c/B | bound c/B | "
                  "aesmux XTS / CTR |\n");
      std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
      for (const Case &c : Cases("xts")) {
        for (int size : opt_.sizes) XtsRow(c, size);
      }
    }
  }

 private:
  std::vector<Case> Cases(const std::string &mode) const {
    std::vector<Case> cases;
    for (int bits : opt_.key_bits) {
      cases.push_back({mode, bits, true});
      // ECB and CTR decrypt as they encrypt (CTR) or at the same speed
      // (ECB on these kernels): the encrypting direction stands for both.
      if (mode == "gcm" || mode == "cbc" || mode == "xts") {
        cases.push_back({mode, bits, false});
      }
    }
    return cases;
  }

  static std::string Label(const Case &c) {
    std::string label = "aes-" + std::to_string(c.bits) + "-" + c.mode;
    if (!c.encrypt) label += " decrypt";
    return label;
  }

  std::unique_ptr<Records> Local(const Case &c, size_t bytes,
                                 bool aesmux) const {
    const CipherPtr cipher = aesmux ? env_.Aesmux(c.CipherName())
                                    : env_.Default(c.CipherName());
    if (cipher == nullptr) Die("cannot fetch " + c.CipherName());
    return std::make_unique<Records>(cipher.get(), c, bytes);
  }

  // Median MB/s of each side over alternating runs (the order rotating
  // from run to run) and the medians of aesmux's per-run ratios to each
  // other side; sides[0] is aesmux.
  struct Medians {
    std::vector<double> mbps;
    std::vector<double> ratio;
  };
  Medians Measure(std::vector<Side *> sides, size_t bytes) {
    std::vector<long> calls;
    for (Side *side : sides) calls.push_back(side->Calibrate(opt_.batch_ms * 1e-3));
    std::vector<std::vector<double>> mbps(sides.size()), ratio(sides.size());
    for (int r = 0; r < opt_.runs; ++r) {
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

  void PeerRow(const Case &c, int size) {
    const char *dir = c.encrypt ? "enc" : "dec";
    auto aesmux = Local(c, size, true);
    auto fallback = Local(c, size, false);
    const std::string expect = fallback->Digest();
    if (aesmux->Digest() != expect) Die(Label(c) + ": aesmux disagrees");
    const std::string answer =
        peer_.Ask("setup " + c.mode + " " + std::to_string(c.bits) + " " +
                  dir + " " + std::to_string(size));
    if (answer != "ok " + expect) {
      Die(Label(c) + " " + std::to_string(size) + ": BoringSSL: " + answer);
    }
    Side a(std::move(aesmux)), d(std::move(fallback)), b(&peer_);
    const Medians m = Measure({&a, &d, &b}, size);
    std::printf("| %s | %d | %.0f | %.0f | %.0f | %.2f | %.2f |\n",
                Label(c).c_str(), size, m.mbps[2], m.mbps[1], m.mbps[0],
                m.ratio[2], m.ratio[1]);
    std::fflush(stdout);
  }

  void XtsRow(const Case &c, int size) {
    auto aesmux = Local(c, size, true);
    auto fallback = Local(c, size, false);
    if (aesmux->Digest() != fallback->Digest()) {
      Die(Label(c) + ": aesmux disagrees");
    }
    Side a(std::move(aesmux)), d(std::move(fallback));
    Side ctr(Local({"ctr", c.bits, true}, size, true));
    const Medians m = Measure({&a, &d, &ctr}, size);
    const double cpb = ticks_per_second_ * cycles_per_tick_ / (m.mbps[0] * 1e6);
    std::printf("| %s | %d | %.0f | %.0f | %.2f | %.3f | %.3f | %.2f |\n",
                Label(c).c_str(), size, m.mbps[1], m.mbps[0], m.ratio[1], cpb,
                ParallelBound(c.bits), m.ratio[2]);
    std::fflush(stdout);
  }

  const Options &opt_;
  ProviderEnv env_;
  Peer peer_;
  double ticks_per_second_ = 0;
  double cycles_per_tick_ = 0;
};

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    const std::string &arg = args.arg();
    if (arg == "--tier") {
      opt.tier = args.Value();
    } else if (arg == "--modes") {
      opt.modes = SplitList(args.Value());
    } else if (arg == "--key-bits") {
      opt.key_bits = ParseList(args.Value());
    } else if (arg == "--sizes") {
      opt.sizes = ParseList(args.Value());
    } else if (arg == "--runs") {
      opt.runs = args.Int(1);
    } else if (arg == "--ms") {
      opt.batch_ms = args.Double(1);
    } else if (arg == "--peer") {
      opt.peer = args.Value();
    } else {
      Die("usage: peer_bench [--tier NAME] [--modes gcm,ctr,cbc,ecb,xts] "
          "[--key-bits 128,256] [--sizes 16,256,1344,8192,16384] [--runs 7] "
          "[--ms 20] [--peer PATH]");
    }
  }
  for (const std::string &mode : opt.modes) {
    if (mode != "gcm" && mode != "ctr" && mode != "cbc" && mode != "ecb" &&
        mode != "xts") {
      Die("unknown mode " + mode);
    }
  }
  for (int bits : opt.key_bits) {
    if (bits != 128 && bits != 256) Die("--key-bits: 128 and 256 only");
  }
  for (int size : opt.sizes) {
    // Whole blocks: with padding off, CBC and ECB refuse a partial one.
    if (size <= 0 || size % 16 != 0) Die("sizes must be whole blocks");
  }
  if (!opt.tier.empty() && opt.tier != "vaes_avx512" &&
      BoringCpuMask(opt.tier).empty()) {
    Die("--tier: vaes_avx512, vaes_avx2 or aesni");
  }
  return opt;
}

}  // namespace
}  // namespace aesmux::test

int main(int argc, char **argv) {
  // A peer that dies must not kill the driver with SIGPIPE before it can
  // say so.
  std::signal(SIGPIPE, SIG_IGN);
  const aesmux::test::Options opt = aesmux::test::ParseOptions(argc, argv);
  aesmux::test::Driver(opt).Run();
  return 0;
}

#endif  // OPENSSL_IS_BORINGSSL
