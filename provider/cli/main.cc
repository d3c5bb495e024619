// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// aesmux: what the aesmux provider does on this machine, where its work
// went, how fast it is, and thresholds measured here. See aesmux(1) (the
// man page, docs/aesmux.1.in) and `aesmux --help`.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "provider/cli/bench.h"
#include "provider/cli/calibrate.h"
#include "provider/cli/info.h"
#include "provider/cli/provider_handle.h"
#include "provider/cli/stats_report.h"

namespace {

constexpr const char kHelp[] =
    "usage: aesmux COMMAND [OPTIONS]\n"
    "\n"
    "aesmux is an OpenSSL 3 provider for AES. OpenSSL loads it as its\n"
    "openssl.cnf ($OPENSSL_CONF, or OpenSSL's default file) says; this\n"
    "command loads it the same way (OPENSSL_MODULES finds a build tree).\n"
    "\n"
    "commands:\n"
    "  info [--json]\n"
    "      OpenSSL version, CPU features, the kernel tiers and the one in\n"
    "      use, each algorithm's route, the multi-buffer lanes, the afalg\n"
    "      probe per family, and every setting in force with where it came\n"
    "      from (default, calibration, openssl.cnf, environment), all as\n"
    "      the provider reports them.\n"
    "  stats [--per-process] [--json] [PREFIX | FILE...]\n"
    "      The statistics files of processes that ran aesmux with\n"
    "      stats_file = PREFIX (PREFIX.<pid>), summed or one process at a\n"
    "      time: requests, bytes and share of each algorithm's bytes per\n"
    "      path, afalg hand-offs by reason, why the afalg path is off.\n"
    "      Without arguments, the stats_file in force.\n"
    "  bench [--algs LIST] [--sizes LIST] [--decrypt] [--seconds S] [--runs N]\n"
    "        [--elapsed]\n"
    "      aesmux (as configured) against OpenSSL's default provider, side\n"
    "      by side: alternating runs, medians, ratios. LIST is comma\n"
    "      separated: --algs aes-128-gcm,aes-256-ctr --sizes 16,1K,16K\n"
    "      (defaults: aes-128-gcm, aes-256-gcm, aes-128-cbc, aes-128-ctr,\n"
    "      aes-128-xts; 16, 256, 1K, 16K; 3 runs of 0.2 s per side). Times\n"
    "      are this thread's CPU time (what other processes take from a\n"
    "      shared machine does not count), --elapsed: wall-clock time (for\n"
    "      an offload engine, whose work is not this thread's).\n"
    "  calibrate [--quick] [--output FILE] [--plot FILE.svg] [--cnf]\n"
    "            [--module PATH] [--streams N] [--margin PERCENT] [--runs N]\n"
    "            [--seconds S]\n"
    "      Measures every path aesmux can take here (simd at each kernel\n"
    "      tier, mb with N streams, afalg where the kernel has AF_ALG,\n"
    "      fallback) for every algorithm, key size and direction from 16 B\n"
    "      to 64 KiB, alternating the paths and taking medians; finds where\n"
    "      each starts to win (by more than --margin, 5 %: the hysteresis\n"
    "      against noise); writes the thresholds as a calibration file\n"
    "      (default aesmux-calibration.conf; --cnf: lines for openssl.cnf)\n"
    "      and the curves as an SVG plot (default aesmux-calibration.svg;\n"
    "      a PNG beside it when rsvg-convert is installed). --quick takes\n"
    "      under a minute even on a busy machine, the full run some\n"
    "      minutes, with progress and time left. --module loads that\n"
    "      aesmux.so (a build tree).\n"
    "      CPU paths are timed in this thread's CPU time, afalg in elapsed\n"
    "      time: calibrate afalg on an otherwise idle machine.\n"
    "  help, --help\n"
    "      This text.\n";

}  // namespace

int main(int argc, char **argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
  if (command == "info") return aesmux::cli::RunInfo(args);
  if (command == "bench") return aesmux::cli::RunBench(args);
  if (command == "calibrate") return aesmux::cli::RunCalibrate(args);
  if (command == "stats") {
    std::string prefix;
    bool named = false;
    for (const std::string &arg : args) named = named || arg[0] != '-';
    if (!named) {
      // The stats_file in force, as the provider reports it.
      std::string error;
      if (auto aesmux = aesmux::cli::ProviderHandle::Configured(&error)) {
        if (aesmux->Param("setting.stats_file.origin") != "default") {
          prefix = aesmux->Param("setting.stats_file");
        }
      }
    }
    return aesmux::cli::RunStats(args, prefix);
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::fputs(kHelp, stdout);
    return 0;
  }
  std::fputs(kHelp, stderr);
  return 2;
}
