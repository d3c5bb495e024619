// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// evp_floor_bench: what OpenSSL 3's libcrypto costs per AES-GCM record,
// whatever the provider, against BoringSSL's whole record. Not a test.
//
// The same record as peer_bench (peer_records.h: IV, 13 bytes of AAD,
// update, final, tag) on five sides, alternating cell by cell:
//   BoringSSL       peer_bench_boringssl, driven over a pipe as peer_bench
//                   does (peer_driver.h)
//   floor_nothing   a provider that does no cryptography
//                   (floor_provider.h): libcrypto's own cost per record
//   floor_thin      a provider doing the real work on aesmux's kernels
//                   with the least glue: the best any provider on these
//                   kernels could do under libcrypto 3
//   aesmux          the module under test
//   default         OpenSSL's default provider
// Before a cell is timed and again after, floor_thin's, aesmux's and
// BoringSSL's output and tag must equal the default provider's, and
// floor_thin must refuse a decryption whose tag is wrong; the program
// stops if not. Times are ns of the thread's CPU time per record, medians
// of alternating batches; ratios are BoringSSL's time over the side's,
// medians of the per-run ratios (1.0 = as fast as BoringSSL).
//
// --tier NAME runs aesmux and floor_thin on that kernel tier and masks
// BoringSSL's CPUID bits to the same class of code (peer_driver.h's
// BoringCpuMask); without it each picks its best.
//
// --count SIDE runs `--records` records of one cell on one side inside
// FloorRecordLoop and nothing else, for bench/peer/floor_cost.py to count
// under callgrind (which runs no VAES: use --tier aesni there).
//
//   evp_floor_bench [--tier NAME] [--key-bits 128,256] [--dirs enc,dec]
//                   [--sizes 16,256,1344,8192,16384] [--runs 7] [--ms 20]
//                   [--peer PATH]
//   evp_floor_bench --count nothing|thin|aesmux|default [--tier aesni]
//                   [--key-bits 128] [--sizes 16] [--dirs enc]
//                   [--records 1000]
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "bench/peer/floor_provider.h"
#include "bench/peer/peer_driver.h"
#include "bench/peer/peer_records.h"
#include "bench/support/bench_util.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

const char kBenchName[] = "evp_floor_bench";

}  // namespace aesmux::test

// The counted loop, by a name callgrind's --toggle-collect can find.
extern "C" __attribute__((noinline)) void FloorRecordLoop(
    aesmux::test::Records *records, long count) {
  for (long i = 0; i < count; ++i) records->Run();
}

namespace aesmux::test {
namespace {

struct Options : PeerOptions {
  std::vector<std::string> dirs = {"enc", "dec"};
  std::string count;  // a side: count its records instead of timing
  long records = 1000;
};

// The OpenSSL sides, in the table's order after BoringSSL.
const char *const kLocalSides[] = {kFloorNothing, kFloorThin, "aesmux",
                                   "default"};

class Bench {
 public:
  explicit Bench(const Options &opt)
      : opt_(opt),
        env_(opt.tier.empty() ? std::vector<std::string>{}
                              : std::vector<std::string>{"kernels = " +
                                                         opt.tier}),
        floor_(env_.libctx(), opt.tier) {
    if (!env_.loaded()) Die("aesmux did not load: " + env_.error());
    if (!floor_.error().empty()) Die(floor_.error());
  }

  // Records of one cell on one OpenSSL side: "floor_nothing",
  // "floor_thin", "aesmux" or "default".
  std::unique_ptr<Records> Local(const Case &c, size_t bytes,
                                 const std::string &side) const {
    const std::string query = "provider=" + side;
    CipherPtr cipher(
        EVP_CIPHER_fetch(env_.libctx(), c.CipherName().c_str(), query.c_str()));
    if (cipher == nullptr) Die("cannot fetch " + c.CipherName() + " " + query);
    return std::make_unique<Records>(cipher.get(), c, bytes);
  }

  void Count() {
    const std::string side = opt_.count == "nothing" ? kFloorNothing
                             : opt_.count == "thin"  ? kFloorThin
                                                     : opt_.count;
    const Case c{"gcm", opt_.key_bits.at(0), opt_.dirs.at(0) == "enc"};
    auto records = Local(c, opt_.sizes.at(0), side);
    records->Run();  // the first record's one-time work is not counted
    FloorRecordLoop(records.get(), opt_.records);
  }

  void Table() {
    Peer peer(opt_.peer, BoringCpuMask(opt_.tier));
    std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof(date), "%Y-%m-%d", std::localtime(&now));
    std::printf("# %s · %s\n", date, CpuModelName().c_str());
    std::printf("# %s; aesmux tier %s; floor_thin tier %s; BoringSSL "
                "OPENSSL_ia32cap=%s\n",
                OpenSSL_version(OPENSSL_VERSION),
                env_.ProviderParam("tier").c_str(), floor_.tier().c_str(),
                BoringCpuMask(opt_.tier).empty()
                    ? "(unset: its own choice)"
                    : BoringCpuMask(opt_.tier).c_str());
    std::printf("# ns of CPU time per record, median of %d alternating "
                "batches of ~%.0f ms per side; SIDE / BoringSSL: speed "
                "ratio (BoringSSL's time over the side's), median of the "
                "per-run ratios\n\n",
                opt_.runs, opt_.batch_ms);
    std::printf("| algorithm | bytes | BoringSSL ns | nothing ns | thin ns | "
                "aesmux ns | default ns | nothing / BoringSSL | "
                "thin / BoringSSL | aesmux / BoringSSL | "
                "default / BoringSSL |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int bits : opt_.key_bits) {
      for (const std::string &dir : opt_.dirs) {
        const Case c{"gcm", bits, dir == "enc"};
        CheckTagRefused(c);
        for (int size : opt_.sizes) Row(c, size, &peer);
      }
    }
  }

 private:
  // floor_thin's decryption must fail on a tag with one bit flipped, as
  // the default provider's does (that it succeeds on the right one, every
  // Row's decryptions check).
  void CheckTagRefused(const Case &c) const {
    if (c.encrypt) return;
    for (const char *side : {kFloorThin, "default"}) {
      if (Local(c, 64, side)->AcceptsWrongTag()) {
        Die(std::string(side) + ": accepted a wrong tag");
      }
    }
  }

  void Row(const Case &c, int size, Peer *peer) {
    std::vector<std::unique_ptr<Records>> local;
    for (const char *side : kLocalSides) local.push_back(Local(c, size, side));
    const std::string expect = local[3]->Digest();
    const auto check = [&](const char *when) {
      for (size_t s = 1; s < 3; ++s) {
        if (local[s]->Digest() != expect) {
          Die(Label(c) + ": " + kLocalSides[s] +
              " disagrees with the default provider " + when);
        }
      }
    };
    check("before timing");
    const std::string answer =
        peer->Ask("setup gcm " + std::to_string(c.bits) + " " +
                  (c.encrypt ? "enc" : "dec") + " " + std::to_string(size));
    if (answer != "ok " + expect) {
      Die(Label(c) + ": BoringSSL: " + answer);
    }
    std::vector<Side> sides = {Side(peer)};
    for (auto &r : local) sides.emplace_back(r.get());
    std::vector<Side *> order;
    for (Side &side : sides) order.push_back(&side);
    const Medians m = Measure(order, size, opt_.runs, opt_.batch_ms);
    check("after timing");
    std::printf("| %s | %d |", Label(c).c_str(), size);
    for (double mbps : m.mbps) std::printf(" %.0f |", size * 1e3 / mbps);
    for (size_t s = 1; s < m.ratio.size(); ++s) {
      std::printf(" %.2f |", 1.0 / m.ratio[s]);
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  static std::string Label(const Case &c) {
    return "aes-" + std::to_string(c.bits) + "-gcm" +
           (c.encrypt ? "" : " decrypt");
  }

  const Options &opt_;
  ProviderEnv env_;
  FloorProviders floor_;  // unloaded before env_'s library context goes
};

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    if (opt.Read(args)) continue;
    const std::string &arg = args.arg();
    if (arg == "--dirs") {
      opt.dirs = SplitList(args.Value());
    } else if (arg == "--count") {
      opt.count = args.Value();
    } else if (arg == "--records") {
      opt.records = args.Int(1);
    } else {
      Die("usage: evp_floor_bench [--tier NAME] [--key-bits 128,256] "
          "[--dirs enc,dec] [--sizes 16,256,1344,8192,16384] [--runs 7] "
          "[--ms 20] [--peer PATH] [--count nothing|thin|aesmux|default "
          "[--records 1000]]");
    }
  }
  opt.Check();
  if (opt.dirs.empty()) Die("--dirs needs at least one value");
  for (const std::string &dir : opt.dirs) {
    if (dir != "enc" && dir != "dec") Die("--dirs: enc and dec only");
  }
  if (!opt.count.empty() && opt.count != "nothing" && opt.count != "thin" &&
      opt.count != "aesmux" && opt.count != "default") {
    Die("--count: nothing, thin, aesmux or default");
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
  aesmux::test::Bench bench(opt);
  if (opt.count.empty()) {
    bench.Table();
  } else {
    bench.Count();
  }
  return 0;
}
