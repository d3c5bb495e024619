// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// aesmux: what the aesmux provider does on this machine, where its work
// went, how fast it is, and thresholds measured here. See aesmux(1) (the
// man page, docs/aesmux.1.in) and `aesmux --help`.
#include <openssl/crypto.h>

#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "provider/cli/args.h"
#include "provider/cli/bench.h"
#include "provider/cli/calibrate.h"
#include "provider/cli/info.h"
#include "provider/cli/provider_handle.h"
#include "provider/cli/stats_report.h"

namespace aesmux::cli {
namespace {

int RunStatsConfigured(const std::vector<std::string> &args);

// Every command: its options (declared by the command itself), what its
// help says, and what runs it (null for help and version, answered here).
struct Command {
  std::string_view name;
  std::span<const OptionSpec> (*options)();
  std::string_view operands;  // in the synopsis, or ""
  std::string_view description;
  int (*run)(const std::vector<std::string> &args);
};

std::span<const OptionSpec> NoOptions() { return {}; }

constexpr Command kCommands[] = {
    {"info", InfoOptionSpecs, "",
     "OpenSSL version, CPU features, the kernel tiers and the one in\n"
     "use, each algorithm's route, the multi-buffer lanes, the afalg\n"
     "probe per family, and every setting in force with where it came\n"
     "from (default, calibration, openssl.cnf, environment), all as\n"
     "the provider reports them.\n",
     RunInfo},
    {"stats", StatsOptionSpecs, "[PREFIX | FILE...]",
     "The statistics files of processes that ran aesmux with\n"
     "stats_file = PREFIX (PREFIX.<pid>.<id> per process,\n"
     "PREFIX.summary.<uid> per user for those that have exited),\n"
     "summed or one file at a time: requests, bytes and share of each\n"
     "algorithm's bytes per path, afalg hand-offs by reason, why the\n"
     "afalg path is off. Without arguments, the stats_file in force.\n",
     RunStatsConfigured},
    {"bench", BenchOptionSpecs, "",
     "aesmux (as configured) against OpenSSL's default provider, side\n"
     "by side: alternating runs, medians, ratios. LIST is comma\n"
     "separated: --algs aes-128-gcm,aes-256-ctr --sizes 16,1K,16K\n"
     "(defaults: aes-128-gcm, aes-256-gcm, aes-128-cbc, aes-128-ctr,\n"
     "aes-128-xts; 16, 256, 1K, 16K; 3 runs of 0.2 s per side). Times\n"
     "are this thread's CPU time (what other processes take from a\n"
     "shared machine does not count), --elapsed: wall-clock time (for\n"
     "an offload engine, whose work is not this thread's).\n",
     RunBench},
    {"calibrate", CalibrateOptionSpecs, "",
     "Measures every path aesmux can take here (simd at each kernel\n"
     "tier, mb with N streams, afalg where the kernel has AF_ALG,\n"
     "fallback) for every algorithm, key size and direction from 16 B\n"
     "to 64 KiB and at every length a threshold's default sits,\n"
     "alternating the paths and taking medians; finds where each\n"
     "starts to win (by more than --margin, 5 %: the hysteresis\n"
     "against noise); writes the thresholds as a calibration file\n"
     "(default aesmux-calibration.conf; --cnf: lines for openssl.cnf)\n"
     "and the curves as an SVG plot (default aesmux-calibration.svg;\n"
     "a PNG beside it when rsvg-convert is installed), each replacing\n"
     "only a regular file. --quick measures 10 sizes briefly, the full\n"
     "run 24 and longer; the time it will take is estimated from a\n"
     "trial of every path and shown as it goes. --module loads that\n"
     "aesmux.so (a build tree). --families cbc,gcm measures those\n"
     "families alone and writes only their thresholds.\n"
     "CPU paths are timed in this thread's CPU time, afalg in elapsed\n"
     "time: calibrate afalg on an otherwise idle machine.\n",
     RunCalibrate},
    {"help", NoOptions, "[COMMAND]",
     "This text, or one command's.\n", nullptr},
    {"version", NoOptions, "",
     "aesmux's version and the OpenSSL it runs on (also --version).\n",
     nullptr},
};

// "aesmux calibrate [--quick] [--output FILE] ...", wrapped under its
// first item; `lead` is what comes before the command's name.
std::string Synopsis(const Command &command, std::string_view lead) {
  std::string text = std::string(lead) + std::string(command.name);
  const size_t indent = text.size() + 1;
  std::vector<std::string> items;
  for (const OptionSpec &option : command.options()) {
    items.push_back("[" + std::string(option.name) +
                    (option.value.empty() ? "" : " " +
                                                     std::string(option.value)) +
                    "]");
  }
  if (!command.operands.empty()) items.emplace_back(command.operands);
  size_t line = text.size();
  for (const std::string &item : items) {
    if (line + 1 + item.size() > 76) {
      text += "\n" + std::string(indent, ' ') + item;
      line = indent + item.size();
    } else {
      text += " " + item;
      line += 1 + item.size();
    }
  }
  return text;
}

// The description, each line indented.
std::string Indented(std::string_view text, size_t by) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out += std::string(by, ' ') +
           std::string(text.substr(start, end - start + 1));
    start = end + 1;
  }
  return out;
}

void PrintHelp(std::FILE *out) {
  std::fputs(
      "usage: aesmux COMMAND [OPTIONS]\n"
      "       aesmux COMMAND --help\n"
      "       aesmux --version\n"
      "\n"
      "aesmux is an OpenSSL 3 provider for AES. OpenSSL loads it as its\n"
      "openssl.cnf ($OPENSSL_CONF, or OpenSSL's default file) says; this\n"
      "command loads it the same way (OPENSSL_MODULES finds a build tree).\n"
      "\n"
      "commands:\n",
      out);
  for (const Command &command : kCommands) {
    std::fprintf(out, "%s%s",
                 Indented(Synopsis(command, "") + "\n", 2).c_str(),
                 Indented(command.description, 6).c_str());
  }
  std::fputs(
      "\n"
      "Exit status: 0 success, 1 failure (aesmux does not load, a file\n"
      "cannot be read or written), 2 usage error.\n",
      out);
}

void PrintCommandHelp(const Command &command) {
  std::printf("%s\n\n%s", Synopsis(command, "usage: aesmux ").c_str(),
              std::string(command.description).c_str());
}

int PrintVersion() {
  std::printf("aesmux %s (OpenSSL %s)\n", AESMUX_VERSION,
              OpenSSL_version(OPENSSL_VERSION_STRING));
  return 0;
}

const Command *FindCommand(std::string_view name) {
  for (const Command &command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::vector<std::string_view> CommandNames() {
  std::vector<std::string_view> names;
  for (const Command &command : kCommands) names.push_back(command.name);
  return names;
}

int RunStatsConfigured(const std::vector<std::string> &args) {
  // Without a PREFIX or FILE, the stats_file in force, as the provider
  // reports it.
  bool named = false, options_end = false;
  for (const std::string &arg : args) {
    named = named || options_end || !arg.starts_with("-") || arg == "-";
    options_end = options_end || arg == "--";
  }
  std::string prefix;
  if (!named) {
    std::string error;
    if (auto aesmux = ProviderHandle::Configured(&error)) {
      if (aesmux->Param("setting.stats_file.origin") != "default") {
        prefix = aesmux->Param("setting.stats_file");
      }
    }
  }
  return RunStats(args, prefix);
}

int Main(int argc, char **argv) {
  if (argc < 2) {
    std::fputs(
        "usage: aesmux COMMAND [OPTIONS]\n"
        "commands: info, stats, bench, calibrate, help, version\n"
        "Try 'aesmux --help'.\n",
        stderr);
    return kUsageError;
  }
  const std::string name = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (name == "--help" || name == "-h") {
    PrintHelp(stdout);
    return 0;
  }
  const std::vector<std::string_view> names = CommandNames();
  const Command *command = FindCommand(name == "--version" ? "version" : name);
  if (command == nullptr) {
    if (name.starts_with("-")) {
      const std::string_view top[] = {"--help", "--version"};
      std::fprintf(stderr, "aesmux: unknown option '%s'%s\n", name.c_str(),
                   DidYouMean(name, top).c_str());
    } else {
      std::fprintf(stderr, "aesmux: unknown command '%s'%s\n", name.c_str(),
                   DidYouMean(name, names).c_str());
    }
    std::fputs("Try 'aesmux --help'.\n", stderr);
    return kUsageError;
  }
  if (command->name == "help") {
    if (args.size() > 1) {
      std::fprintf(stderr, "aesmux help: one COMMAND at most\n");
      return kUsageError;
    }
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      PrintHelp(stdout);
      return 0;
    }
    const Command *about = FindCommand(args[0]);
    if (about == nullptr) {
      std::fprintf(stderr, "aesmux help: unknown command '%s'%s\n",
                   args[0].c_str(), DidYouMean(args[0], names).c_str());
      return kUsageError;
    }
    PrintCommandHelp(*about);
    return 0;
  }
  // --help anywhere before "--": the command's own help, nothing run.
  if (WantsHelp(args)) {
    PrintCommandHelp(*command);
    return 0;
  }
  if (command->name == "version") {
    return CommandLine("version", {}, args).ok() ? PrintVersion()
                                                 : kUsageError;
  }
  return command->run(args);
}

}  // namespace
}  // namespace aesmux::cli

int main(int argc, char **argv) { return aesmux::cli::Main(argc, argv); }
