// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/calibrate_paths.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "provider/cli/bench.h"
#include "provider/core/process.h"

namespace aesmux::cli {
namespace {

using core::Family;
using core::kNumFamilies;

// The driver in an afalg state "on (force) from 0 bytes: cbc-aes-qce (…)".
std::string DriverOf(const std::string &state) {
  const size_t colon = state.find(": ");
  if (colon == std::string::npos) return "?";
  const std::string rest = state.substr(colon + 2);
  return rest.substr(0, rest.find(' '));
}

// Threads per CPU of the threads paths: the shape of a threaded server with
// small records that the default cbc.mb_threads_min_len was measured at (16
// threads on 2 CPUs; BENCHMARKS.md, "How much do multi-buffer lanes and
// threads gain?").
constexpr int kThreadsPerCpu = 8;
constexpr int kMaxThreads = 64;

}  // namespace

double ThreadsSeconds(const CalibrateOptions &options) {
  return std::max(4 * options.seconds, 0.05);
}

bool SetUpPaths(const CalibrateOptions &options, Plan *plan) {
  std::string error;
  std::unique_ptr<ProviderHandle> plain =
      ProviderHandle::WithSettings(options.module, {"afalg = off"}, &error);
  if (plain == nullptr) {
    std::fprintf(stderr, "aesmux calibrate: cannot load aesmux:\n%s",
                 error.c_str());
    return false;
  }
  plan->best_tier = plain->Param("tier");
  plan->version = plain->Param("version");
  auto add_path = [&](const std::string &name,
                      const std::vector<std::string> &settings) -> bool {
    PathUnderTest path;
    path.name = name;
    path.provider =
        ProviderHandle::WithSettings(options.module, settings, &error);
    if (path.provider == nullptr) {
      std::fprintf(stderr, "aesmux calibrate: %s: %s", name.c_str(),
                   error.c_str());
      return false;
    }
    path.serves.fill(true);
    path.label.fill(name);
    plan->paths.push_back(std::move(path));
    return true;
  };
  for (const std::string &line : plain->ParamLines("tiers")) {
    const std::string tier = line.substr(0, line.find('\t'));
    if (line.ends_with("\tusable") &&
        !add_path("simd " + tier, {"kernels = " + tier, "afalg = off",
                                   "cbc.mb_max_len = 0"})) {
      return false;
    }
  }
  if (!add_path("fallback", {"kernels = none", "afalg = off"})) return false;
  const std::string mb_tier = plain->Param("mb-tier");
  if (mb_tier != "none") {
    plan->streams = options.streams;
    if (plan->streams == 0) {
      // "vaes_avx512 (4, 8, 16 lanes)": the widest.
      const size_t lanes = mb_tier.rfind(", ");
      plan->streams = std::atoi(
          mb_tier.c_str() + (lanes == std::string::npos
                                 ? mb_tier.find('(') + 1
                                 : lanes + 2));
    }
    if (!add_path("mb x" + std::to_string(plan->streams),
                  {"afalg = off", "cbc.mb_max_len = 64K"})) {
      return false;
    }
    PathUnderTest &mb = plan->paths.back();
    mb.async = true;
    mb.serves.fill(false);
    mb.serves[static_cast<size_t>(Family::kCbc)] = true;
    // Threads beyond the CPUs: combined at every size against each alone,
    // for cbc.mb_threads_min_len.
    plan->cpus = static_cast<int>(core::UsableCpus());
    plan->threads = std::min(kThreadsPerCpu * plan->cpus, kMaxThreads);
    const std::string threads = "threads x" + std::to_string(plan->threads);
    if (!add_path(threads + " combined",
                  {"afalg = off", "cbc.mb_max_len = 64K",
                   "cbc.mb_threads_min_len = 0"}) ||
        !add_path(threads + " alone", {"afalg = off", "cbc.mb_max_len = 0"})) {
      return false;
    }
    for (size_t p = plan->paths.size() - 2; p < plan->paths.size(); ++p) {
      plan->paths[p].threads = plan->threads;
      plan->paths[p].serves.fill(false);
      plan->paths[p].serves[static_cast<size_t>(Family::kCbc)] = true;
    }
  }
  std::vector<std::string> force = {"afalg = force", "cbc.mb_max_len = 0"};
  for (std::string_view family : core::kFamilyNames) {
    force.push_back(std::string(family) + ".afalg_min_len = 0");
  }
  std::unique_ptr<ProviderHandle> afalg =
      ProviderHandle::WithSettings(options.module, force, &error);
  PathUnderTest path;
  path.name = "afalg";
  bool any = false;
  std::string why_not = "aesmux with afalg = force did not load";
  for (size_t f = 0; afalg != nullptr && f < kNumFamilies; ++f) {
    const std::string state =
        afalg->Param("afalg." + std::string(core::kFamilyNames[f]));
    path.serves[f] = state.starts_with("on");
    path.label[f] = "afalg " + DriverOf(state);
    if (!path.serves[f] && !any) why_not = state;
    any = any || path.serves[f];
  }
  if (any) {
    path.provider = std::move(afalg);
    plan->paths.push_back(std::move(path));
  } else {
    // "off (force): no AF_ALG in this kernel (…)" and the like.
    plan->afalg_note = "afalg: not measured: " + why_not;
  }
  return true;
}

std::optional<Measured> MeasureAlgorithm(const core::AlgInfo &alg,
                                         Direction direction,
                                         const Plan &plan,
                                         const std::vector<size_t> &sizes,
                                         const CalibrateOptions &options,
                                         Progress *progress) {
  const auto f = static_cast<size_t>(alg.family);
  Measured m;
  m.alg = alg;
  m.direction = direction;
  std::vector<const PathUnderTest *> taking;
  std::vector<CipherPtr> ciphers;
  for (const PathUnderTest &path : plan.paths) {
    // mb and the threads paths measure encryption only.
    if (!path.serves[f] || ((path.async || path.threads > 0) &&
                            direction == Direction::kDecrypt)) {
      continue;
    }
    taking.push_back(&path);
    ciphers.push_back(path.provider->Aesmux(alg.name));
    m.curves.push_back({path.label[f], std::vector<double>(sizes.size())});
    if (ciphers.back() == nullptr) {
      std::fprintf(stderr, "aesmux calibrate: %s: no %s\n",
                   path.name.c_str(), std::string(alg.name).c_str());
      return std::nullopt;
    }
  }
  const std::string what =
      std::string(alg.name) + " " + DirectionName(direction);
  std::string error;
  for (size_t k = 0; k < sizes.size(); ++k) {
    // Every path's workloads for this size, then the runs in turn.
    std::vector<std::vector<std::unique_ptr<Workload>>> workloads;
    for (size_t p = 0; p < taking.size(); ++p) {
      workloads.emplace_back();
      const int count = taking[p]->async         ? plan.streams
                        : taking[p]->threads > 0 ? taking[p]->threads
                                                 : 1;
      for (int s = 0; s < count; ++s) {
        workloads.back().push_back(
            Workload::Create(ciphers[p].get(), direction, sizes[k], &error));
        if (workloads.back().back() == nullptr) {
          std::fprintf(stderr, "aesmux calibrate: %s: %s\n",
                       taking[p]->name.c_str(), error.c_str());
          return std::nullopt;
        }
      }
    }
    std::vector<std::vector<double>> runs(taking.size());
    for (int run = 0; run < options.runs; ++run) {
      for (size_t p = 0; p < taking.size(); ++p) {
        double rate = 0;
        double weight = 1;  // in measurements of options.seconds
        std::vector<Workload *> streams;
        for (auto &w : workloads[p]) streams.push_back(w.get());
        if (taking[p]->async) {
          rate = RunAsyncJobs(streams, options.seconds, Clock::kThreadCpu);
        } else if (taking[p]->threads > 0) {
          rate = RunOnThreads(streams, ThreadsSeconds(options));
          weight = ThreadsSeconds(options) / options.seconds;
        } else {
          // The afalg path's work happens off this thread: only the
          // elapsed time counts it.
          rate = workloads[p].front()->Run(
              options.seconds,
              taking[p]->name == "afalg" ? Clock::kWall : Clock::kThreadCpu);
        }
        runs[p].push_back(rate);
        progress->Advance(taking[p]->name, weight,
                          what + " " + FormatSize(sizes[k]));
      }
    }
    for (size_t p = 0; p < taking.size(); ++p) {
      m.curves[p].bytes_per_second[k] = Median(runs[p]);
    }
  }
  FindCrossovers(sizes, options.margin, "simd " + plan.best_tier, &m);
  return m;
}

}  // namespace aesmux::cli
