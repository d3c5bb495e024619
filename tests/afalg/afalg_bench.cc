// afalg_bench: what the afalg path costs per request, at the engine, for
// AES-128-CBC encryption of one size: out of place, and in place (the
// input is staged so that a failed kernel request loses nothing). Prints
// one line per case: "<case> <bytes> <requests/s> <MB/s>". Not a test.
//
//   afalg_bench [BYTES] [SECONDS]      (defaults 16384, 2)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kernels/tiers.h"
#include "provider/fallback/fallback.h"
#include "provider/route/block_engine.h"
#include "provider/route/router.h"

using namespace aesmux;

int main(int argc, char **argv) {
  const size_t bytes = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 16384;
  const double seconds = argc > 2 ? std::strtod(argv[2], nullptr) : 2.0;
  std::string error;
  auto library = fallback::FallbackLibrary::Create(&error);
  if (library == nullptr) {
    std::fprintf(stderr, "afalg_bench: %s\n", error.c_str());
    return 1;
  }
  route::Settings settings;
  settings.tier = kernels::BestTier(kernels::DetectCpuFeatures());
  for (route::FamilySettings &family : settings.families) {
    family.afalg = route::AfalgPolicy::kForce;
  }
  route::Router router(settings, library.get());
  if (!router.afalg_on(route::Family::kCbc)) {
    std::fprintf(stderr, "afalg_bench: %s\n",
                 router.afalg_state(route::Family::kCbc).c_str());
    return 1;
  }
  route::BlockEngine engine(router, route::Alg::kAes128Cbc);
  const std::vector<uint8_t> key(16, 7);
  engine.SetKey(key);
  std::vector<uint8_t> in(bytes, 1), out(bytes);
  uint8_t iv[16] = {};
  for (const bool in_place : {false, true, false, true}) {
    const route::Segment segment{out.data(), in_place ? out.data() : in.data(),
                                 bytes};
    uint64_t requests = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
      for (int i = 0; i < 16; ++i) {
        if (!engine.Run(route::Direction::kEncrypt, iv,
                        std::span(&segment, 1))) {
          return 1;
        }
      }
      requests += 16;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              start)
                    .count();
    }
    std::printf("%s %zu %.0f %.1f\n", in_place ? "in-place" : "out-of-place",
                bytes, requests / elapsed, requests * bytes / elapsed / 1e6);
  }
  return 0;
}
