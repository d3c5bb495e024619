// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// afalg_bench: what the afalg path costs per request, at the engine. Not a
// test.
//
//   afalg_bench [BYTES] [SECONDS]      (defaults 16384, 2)
//       AES-128-CBC encryption of BYTES per request, out of place and in
//       place (the input is staged so that a failed kernel request loses
//       nothing): "<case> <bytes> <requests/s> <MB/s>" per case.
//   afalg_bench --vs-cpu [--sizes 256,1024,...] [--seconds S] [--runs N]
//       AES-128-CBC encryption and AES-128-CTR at each size on the afalg
//       path and on the CPU's path (simd, or fallback in a build without
//       kernels), alternating, N runs (3) of S seconds (0.25) each:
//       "vs-cpu <alg> <bytes> afalg <req/s> <cpu path> <req/s> <ratio>"
//       (medians), then per algorithm what a straight line through the
//       smallest and largest size gives: each path's cost per request and
//       per byte, and "break-even <bytes>": the request length from which
//       an offload engine that costs the CPU nothing per byte would beat
//       the CPU's path, given the afalg path's cost per request here.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/tiers.h"
#include "provider/fallback/fallback.h"
#include "provider/route/block_engine.h"
#include "provider/route/router.h"
#include "bench/support/bench_util.h"

using namespace aesmux;
using test::Die;

const char aesmux::test::kBenchName[] = "afalg_bench";

namespace {

// A router with the afalg path forced for every family (afalg) or off.
std::unique_ptr<route::Router> MakeRouter(
    const fallback::FallbackLibrary &library, bool afalg) {
  route::Settings settings;
  settings.tier = kernels::BestTier(kernels::DetectCpuFeatures());
  for (route::FamilySettings &family : settings.families) {
    family.afalg =
        afalg ? route::AfalgPolicy::kForce : route::AfalgPolicy::kOff;
  }
  auto router = std::make_unique<route::Router>(settings, &library);
  if (afalg && !router->afalg_on(core::Family::kCbc)) {
    Die(router->afalg_state(core::Family::kCbc));
  }
  return router;
}

// Requests per second of `segment` through `engine`, over `seconds`.
double RequestsPerSecond(route::BlockEngine &engine,
                         const core::Segment &segment, double seconds) {
  uint8_t iv[16] = {};
  long requests = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (int i = 0; i < 16; ++i) {
      if (!engine.Run(core::Direction::kEncrypt, iv, std::span(&segment, 1))) {
        Die("a request failed");
      }
    }
    requests += 16;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start)
                  .count();
  }
  return requests / elapsed;
}

int StagingCost(const fallback::FallbackLibrary &library, size_t bytes,
                double seconds) {
  auto router = MakeRouter(library, true);
  route::BlockEngine engine(*router, core::Alg::kAes128Cbc);
  const std::vector<uint8_t> key(16, 7);
  engine.SetKey(key);
  test::Buffer in(bytes), out(bytes);
  for (const bool in_place : {false, true, false, true}) {
    const core::Segment segment{out.data, in_place ? out.data : in.data,
                                 bytes};
    const double rps = RequestsPerSecond(engine, segment, seconds);
    std::printf("%s %zu %.0f %.1f\n", in_place ? "in-place" : "out-of-place",
                bytes, rps, rps * bytes / 1e6);
  }
  return 0;
}

int VersusCpu(const fallback::FallbackLibrary &library,
              const std::vector<int> &sizes, double seconds, int runs) {
  auto afalg_router = MakeRouter(library, true);
  auto cpu_router = MakeRouter(library, false);
  const char *cpu_path = cpu_router->tier() != nullptr ? "simd" : "fallback";
  const std::vector<uint8_t> key(16, 7);
  for (const auto &[alg, name] :
       {std::pair{core::Alg::kAes128Cbc, "AES-128-CBC"},
        std::pair{core::Alg::kAes128Ctr, "AES-128-CTR"}}) {
    route::BlockEngine afalg(*afalg_router, alg), cpu(*cpu_router, alg);
    afalg.SetKey(key);
    cpu.SetKey(key);
    std::vector<double> afalg_seconds, cpu_seconds;  // per request, medians
    for (const int size : sizes) {
      test::Buffer in(size), out(size);
      const core::Segment segment{out.data, in.data,
                                   static_cast<size_t>(size)};
      std::vector<double> a, c;
      for (int run = 0; run < runs; ++run) {
        a.push_back(RequestsPerSecond(afalg, segment, seconds));
        c.push_back(RequestsPerSecond(cpu, segment, seconds));
      }
      const double a_rps = test::Median(a), c_rps = test::Median(c);
      std::printf("vs-cpu %s %d afalg %.0f %s %.0f %.2f\n", name, size, a_rps,
                  cpu_path, c_rps, a_rps / c_rps);
      afalg_seconds.push_back(1 / a_rps);
      cpu_seconds.push_back(1 / c_rps);
    }
    const double span = sizes.back() - sizes.front();
    const double a_byte = (afalg_seconds.back() - afalg_seconds.front()) / span;
    const double c_byte = (cpu_seconds.back() - cpu_seconds.front()) / span;
    const double a_request = afalg_seconds.front() - sizes.front() * a_byte;
    const double c_request = cpu_seconds.front() - sizes.front() * c_byte;
    std::printf(
        "fit %s afalg %.1f us/request %.2f ns/B %s %.1f us/request %.2f ns/B "
        "break-even %.0f\n",
        name, a_request * 1e6, a_byte * 1e9, cpu_path, c_request * 1e6,
        c_byte * 1e9, (a_request - c_request) / c_byte);
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  std::string error;
  auto library = fallback::FallbackLibrary::Create(&error);
  if (library == nullptr) Die(error);
  if (argc > 1 && std::string(argv[1]) == "--vs-cpu") {
    std::vector<int> sizes = {256, 1024, 4096, 16384, 65536};
    double seconds = 0.25;
    int runs = 3;
    test::ArgReader args(argc - 1, argv + 1);
    while (args.Next()) {
      if (args.arg() == "--sizes") {
        sizes = test::ParseList(args.Value());
      } else if (args.arg() == "--seconds") {
        seconds = args.Double(0.01);
      } else if (args.arg() == "--runs") {
        runs = args.Int(1);
      } else {
        Die("usage: afalg_bench --vs-cpu [--sizes 256,1024,...] "
            "[--seconds S] [--runs N]");
      }
    }
    if (sizes.size() < 2) Die("--sizes needs at least two sizes");
    return VersusCpu(*library, sizes, seconds, runs);
  }
  const size_t bytes = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 16384;
  const double seconds = argc > 2 ? std::strtod(argv[2], nullptr) : 2.0;
  return StagingCost(*library, bytes, seconds);
}
