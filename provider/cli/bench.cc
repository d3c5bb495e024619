// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/bench.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "provider/cli/args.h"
#include "provider/cli/progress.h"
#include "provider/cli/provider_handle.h"
#include "provider/cli/throughput.h"
#include "provider/core/algorithm.h"
#include "provider/route/settings.h"

namespace aesmux::cli {
namespace {

struct BenchOptions {
  std::vector<std::string> algs = {"aes-128-gcm", "aes-256-gcm", "aes-128-cbc",
                                   "aes-128-ctr", "aes-128-xts"};
  std::vector<size_t> sizes = {16, 256, 1024, 16384};
  bool decrypt = false;
  double seconds = 0.2;  // per run and side
  int runs = 3;
  Clock clock = Clock::kThreadCpu;
};

// --sizes: up to 1 GiB, which EVP's int lengths take in one call.
constexpr uint64_t kMaxBenchSize = uint64_t{1} << 30;

constexpr OptionSpec kOptions[] = {
    {"--algs", "LIST"},   {"--sizes", "LIST"}, {"--decrypt", ""},
    {"--seconds", "S"},   {"--runs", "N"},     {"--elapsed", ""},
};

}  // namespace

std::vector<std::string> SplitList(const std::string &list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

std::span<const OptionSpec> BenchOptionSpecs() { return kOptions; }

std::optional<std::vector<size_t>> ParseSizeList(const std::string &list,
                                                 std::string *error) {
  std::vector<size_t> sizes;
  for (const std::string &item : SplitList(list)) {
    const std::optional<uint64_t> bytes = route::ParseByteCount(item);
    if (!bytes) {
      *error = "'" + item + "' is not a byte count (16, 1K, 64K, 1M)";
      return std::nullopt;
    }
    if (*bytes == 0 || *bytes > kMaxBenchSize) {
      *error = item + " is out of range (1 to 1G)";
      return std::nullopt;
    }
    sizes.push_back(*bytes);
  }
  if (sizes.empty()) {
    *error = "'" + list + "' names no size";
    return std::nullopt;
  }
  return sizes;
}

std::string FormatSize(size_t bytes) {
  char text[32];
  if (bytes < 1024) {
    std::snprintf(text, sizeof(text), "%zu B", bytes);
  } else if (bytes % 1024 == 0) {
    std::snprintf(text, sizeof(text), "%zu KiB", bytes / 1024);
  } else {
    std::snprintf(text, sizeof(text), "%.1f KiB", bytes / 1024.0);
  }
  return text;
}

int RunBench(const std::vector<std::string> &args) {
  BenchOptions options;
  CommandLine line("bench", kOptions, args);
  options.decrypt = line.Flag("--decrypt");
  if (line.Flag("--elapsed")) options.clock = Clock::kWall;
  if (const std::optional<std::string> algs = line.Value("--algs")) {
    options.algs = SplitList(*algs);
    if (options.algs.empty()) {
      line.Error("--algs: '" + *algs + "' names no algorithm");
    }
  }
  if (const std::optional<std::string> sizes = line.Value("--sizes")) {
    std::string error;
    if (std::optional<std::vector<size_t>> parsed =
            ParseSizeList(*sizes, &error)) {
      options.sizes = std::move(*parsed);
    } else {
      line.Error("--sizes: " + error);
    }
  }
  line.Real("--seconds", kMinSeconds, kMaxSeconds, &options.seconds);
  line.Integer("--runs", 1, kMaxRuns, &options.runs);
  if (!line.ok()) return kUsageError;
  std::string error;
  std::unique_ptr<ProviderHandle> provider = ProviderHandle::Configured(&error);
  if (provider == nullptr) {
    std::fprintf(stderr, "aesmux bench: %s", error.c_str());
    return kFailure;
  }
  // A name neither provider knows is a mistake in the command line.
  for (const std::string &alg : options.algs) {
    if (provider->Default(alg) == nullptr) {
      TakeOpensslErrors();
      std::vector<std::string> names;
      for (const core::AlgInfo &info : core::kAlgs) {
        names.emplace_back(info.name);
        for (char &ch : names.back()) ch = static_cast<char>(std::tolower(ch));
      }
      const std::vector<std::string_view> views(names.begin(), names.end());
      line.Error("--algs: no cipher '" + alg + "'" +
                 DidYouMean(alg, views));
    }
  }
  if (!line.ok()) return kUsageError;
  const Direction direction =
      options.decrypt ? Direction::kDecrypt : Direction::kEncrypt;
  std::printf(
      "aesmux (%s) against OpenSSL's default provider: %d alternating runs "
      "of %.2f s of %s per side, medians\n",
      provider->activated_by_config() ? "as openssl.cnf configures it"
                                      : "loaded by name, default settings",
      options.runs, options.seconds,
      options.clock == Clock::kWall ? "elapsed time" : "this thread's CPU time");
  std::printf("%-14s %-8s %9s %14s %14s %7s\n", "algorithm", "", "bytes",
              "default MB/s", "aesmux MB/s", "ratio");
  Progress progress("aesmux bench", static_cast<double>(options.algs.size()) *
                                        options.sizes.size() * options.runs);
  int status = 0;
  for (const std::string &alg : options.algs) {
    CipherPtr ours = provider->Aesmux(alg);
    CipherPtr theirs = provider->Default(alg);
    if (ours == nullptr || theirs == nullptr) {
      std::fprintf(stderr, "aesmux bench: no cipher %s in %s\n", alg.c_str(),
                   ours == nullptr ? "aesmux" : "the default provider");
      TakeOpensslErrors();
      status = 1;
      continue;
    }
    for (const size_t size : options.sizes) {
      std::unique_ptr<Workload> a =
          Workload::Create(theirs.get(), direction, size, &error);
      std::unique_ptr<Workload> b =
          a != nullptr ? Workload::Create(ours.get(), direction, size, &error)
                       : nullptr;
      if (b == nullptr) {
        progress.Print(alg + " " + FormatSize(size) + ": " + error);
        status = 1;
        continue;
      }
      std::vector<double> base, mine;
      for (int run = 0; run < options.runs; ++run) {
        base.push_back(a->Run(options.seconds, options.clock));
        mine.push_back(b->Run(options.seconds, options.clock));
        progress.Advance(1, alg + " " + FormatSize(size));
      }
      const double base_median = Median(base), mine_median = Median(mine);
      char line[160];
      std::snprintf(line, sizeof(line), "%-14s %-8s %9zu %14.0f %14.0f %6.2fx",
                    alg.c_str(), options.decrypt ? "decrypt" : "encrypt", size,
                    base_median / 1e6, mine_median / 1e6,
                    base_median > 0 ? mine_median / base_median : 0.0);
      progress.Print(line);
    }
  }
  return status;
}

}  // namespace aesmux::cli
