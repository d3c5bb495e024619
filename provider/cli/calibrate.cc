// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/calibrate.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "provider/cli/args.h"
#include "provider/cli/calibrate_paths.h"
#include "provider/cli/crossovers.h"
#include "provider/cli/output_file.h"
#include "provider/cli/progress.h"
#include "provider/cli/svg_plot.h"
#include "provider/cli/throughput.h"
#include "provider/core/algorithm.h"
#include "provider/core/process.h"
#include "provider/route/settings.h"

extern char **environ;

namespace aesmux::cli {
namespace {

using core::kNumFamilies;

constexpr OptionSpec kOptions[] = {
    {"--quick", ""},         {"--output", "FILE"}, {"--plot", "FILE.svg"},
    {"--cnf", ""},           {"--module", "PATH"}, {"--streams", "N"},
    {"--margin", "PERCENT"}, {"--runs", "N"},      {"--seconds", "S"},
    {"--families", "LIST"},
};

// --streams: ASYNC jobs at once, each with its own context and buffers.
constexpr int kMaxStreams = 256;

// The largest request measured.
constexpr size_t kLargestSize = 64 * 1024;

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.starts_with("model name")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof(text), "%Y-%m-%d", std::gmtime(&now));
  return text;
}

// The load average over the last minute, or a negative number if unknown.
double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return in ? load : -1;
}

// "load average 3.1 at the start, 2.5 at the end, on 2 CPUs", or "".
std::string DescribeLoad(double start, double end, uint32_t cpus) {
  if (start < 0 || end < 0) return "";
  char text[128];
  std::snprintf(text, sizeof(text),
                "load average %.1f at the start, %.1f at the end, on %u CPUs",
                start, end, cpus);
  return text;
}

// The calibration file's value for a byte count: "64K" when it is whole.
std::string ByteCount(size_t bytes) {
  if (bytes != 0 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + "K";
  return std::to_string(bytes);
}

// cbc.mb_threads_min_len when combining threads never won: above the
// largest size measured.
constexpr size_t kNeverForThreads = 128 * 1024;

// The thresholds: as a calibration file, or (cnf) as lines for aesmux's
// openssl.cnf section.
std::string FormatThresholds(
    const CalibrateOptions &options, const std::string &header,
    const std::vector<Measured> &results,
    const std::array<FamilyThresholds, kNumFamilies> &families,
    const std::string &afalg_note) {
  std::ostringstream out;
  out << header;
  out << "#\n# Per algorithm and direction:\n";
  for (const Measured &m : results) out << "#   " << Describe(m) << "\n";
  if (!afalg_note.empty()) out << "# " << afalg_note << "\n";
  if (options.cnf) {
    out << "#\n# Lines for aesmux's section of openssl.cnf (they override a "
           "calibration file):\n";
  } else {
    out << "#\n# Read when aesmux loads, once openssl.cnf names it:\n"
           "#   calibration_file = <this file>\n"
           "# (or AESMUX_CALIBRATION_FILE). Keys in openssl.cnf or the\n"
           "# environment override it.\n";
  }
  for (size_t f = 0; f < kNumFamilies; ++f) {
    const FamilyThresholds &t = families[f];
    if (!t.measured) continue;
    const std::string family(core::kFamilyNames[f]);
    out << family << ".fallback_max_len = " << ByteCount(t.fallback_max)
        << "\n";
    if (t.afalg_measured) {
      if (t.afalg_min) {
        out << family << ".afalg_min_len = " << ByteCount(*t.afalg_min) << "\n";
      } else {
        out << "# " << family << ".afalg_min_len: afalg did not win up to "
            << "64 KiB for every key size and direction; to keep it off, set "
            << family << ".afalg = off in openssl.cnf\n";
      }
    }
    if (t.mb_measured) {
      if (t.mb_max == 0) {
        out << "# " << family << ".mb_max_len = 0: batching did not win "
            << "over one stream at any size for every key size; it stays "
            << "off\n";
      }
      out << family << ".mb_min_len = " << ByteCount(t.mb_min) << "\n";
      out << family << ".mb_max_len = " << ByteCount(t.mb_max) << "\n";
    }
    if (t.threads_measured) {
      if (!t.threads_min) {
        out << "# " << family << ".mb_threads_min_len: threads combined did "
            << "not win up to 64 KiB for every key size; above every size "
            << "measured, threads never batch\n";
      }
      out << family << ".mb_threads_min_len = "
          << ByteCount(t.threads_min.value_or(kNeverForThreads)) << "\n";
    }
  }
  return out.str();
}

// The PNG made beside the plot.
std::string PngOf(const std::string &svg) {
  std::string png = svg;
  if (png.ends_with(".svg")) png.resize(png.size() - 4);
  return png + ".png";
}

// rsvg-convert, when installed, makes a PNG next to the SVG: it reads the
// SVG written (`svg`, open) and writes into a new file, as the others are.
// The line to print; false in `ok` if the PNG could not be written.
std::string ConvertToPng(const std::string &svg_path, OutputFile &svg,
                         bool *ok) {
  const std::string png_path = PngOf(svg_path);
  std::string error;
  std::unique_ptr<OutputFile> png = OutputFile::Create(png_path, &error);
  if (png == nullptr || lseek(svg.fd(), 0, SEEK_SET) != 0) {
    *ok = false;
    return "PNG: not written: " + error;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, svg.fd(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, png->fd(), STDOUT_FILENO);
  const char *argv[] = {"rsvg-convert", nullptr};
  pid_t pid = 0;
  const int spawned =
      posix_spawnp(&pid, "rsvg-convert", &actions, nullptr,
                   const_cast<char *const *>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return "PNG: not made (rsvg-convert is not installed; Debian: "
           "librsvg2-bin)";
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *ok = false;
    return "PNG: rsvg-convert failed";
  }
  if (!png->Commit(&error)) {
    *ok = false;
    return "PNG: not written: " + error;
  }
  return "plot (PNG): " + png_path;
}

// The lengths where the router's thresholds sit by default: a calibration
// that does not measure there cannot keep a default, only move it to the
// next length it measured.
std::vector<size_t> DefaultLengths() {
  std::vector<size_t> lengths = {route::kDefaultAutoAfalgMinLen,
                                 route::kDefaultAutoAfalgMinLenWithoutAes};
  for (const route::SettingKey &key : route::SettingKeys()) {
    if (!key.calibrated) continue;
    const std::optional<uint64_t> bytes =
        route::ParseByteCount(key.default_value);
    if (bytes && *bytes > 0) lengths.push_back(*bytes);
  }
  return lengths;
}

std::optional<CalibrateOptions> ParseOptions(
    const std::vector<std::string> &args) {
  CalibrateOptions options;
  CommandLine line("calibrate", kOptions, args);
  options.quick = line.Flag("--quick");
  options.cnf = line.Flag("--cnf");
  options.output = line.Value("--output").value_or(options.output);
  options.plot = line.Value("--plot").value_or(options.plot);
  options.module = line.Value("--module").value_or(options.module);
  line.Integer("--streams", 2, kMaxStreams, &options.streams);
  double percent = options.margin * 100;
  if (line.Real("--margin", 0, 100, &percent)) options.margin = percent / 100;
  line.Integer("--runs", 1, kMaxRuns, &options.runs);
  line.Real("--seconds", kMinSeconds, kMaxSeconds, &options.seconds);
  if (const std::optional<std::string> list = line.Value("--families")) {
    // "cbc,gcm": those alone.
    options.families.fill(false);
    const auto &names = core::kFamilyNames;
    std::istringstream in(*list);
    for (std::string name; std::getline(in, name, ',');) {
      const auto f = std::find(names.begin(), names.end(), name);
      if (f == names.end()) {
        line.Error("--families: unknown family '" + name + "'" +
                   DidYouMean(name, names) + " (ecb, cbc, ctr, xts, gcm)");
      } else {
        options.families[f - names.begin()] = true;
      }
    }
    if (std::find(options.families.begin(), options.families.end(), true) ==
        options.families.end()) {
      line.Error("--families names no family");
    }
  }
  const std::set<std::string> files = {options.output, options.plot,
                                       PngOf(options.plot)};
  if (files.size() < 3) {
    line.Error("--output " + options.output + " and --plot " + options.plot +
               " (with its PNG, " + PngOf(options.plot) +
               ") must name different files");
  }
  if (!line.ok()) return std::nullopt;
  if (options.runs == 0) options.runs = options.quick ? 3 : 5;
  if (options.seconds == 0) options.seconds = options.quick ? 0.005 : 0.025;
  return options;
}

// Every path measured in a short trial, so that the time the run will take
// is known before it starts: one algorithm of each family some path serves
// alone, encrypting, at two sizes. Every cipher is fetched first, as the
// run's first fetches are, so that what a first fetch costs (once per
// algorithm and path) is not taken for what each measurement costs.
bool RunTrial(const Plan &plan, const CalibrateOptions &options,
              TimeEstimate *estimate) {
  for (const PathUnderTest &path : plan.paths) {
    for (const core::AlgInfo &alg : core::kAlgs) {
      if (path.serves[static_cast<size_t>(alg.family)]) {
        path.provider->Aesmux(alg.name);
      }
    }
  }
  std::vector<bool> covered(plan.paths.size(), false);
  Progress trial("", 0);
  for (const core::AlgInfo &alg : core::kAlgs) {
    const auto f = static_cast<size_t>(alg.family);
    if (!options.families[f]) continue;
    bool needed = false;
    for (size_t p = 0; p < plan.paths.size(); ++p) {
      needed = needed || (plan.paths[p].serves[f] && !covered[p]);
    }
    if (!needed) continue;
    if (!MeasureAlgorithm(alg, Direction::kEncrypt, plan, {256, 4096},
                          options, &trial)) {
      return false;
    }
    for (size_t p = 0; p < plan.paths.size(); ++p) {
      covered[p] = covered[p] || plan.paths[p].serves[f];
    }
  }
  estimate->LearnFrom(trial.estimate());
  return true;
}

// The options that shape what the calibration file holds, as given:
// " --quick --families cbc".
std::string Invocation(const CalibrateOptions &options) {
  std::string text = options.quick ? " --quick" : "";
  std::string families;
  for (size_t f = 0; f < kNumFamilies; ++f) {
    if (options.families[f]) {
      families += (families.empty() ? "" : ",") +
                  std::string(core::kFamilyNames[f]);
    }
  }
  if (std::count(options.families.begin(), options.families.end(), true) <
      static_cast<long>(kNumFamilies)) {
    text += " --families " + families;
  }
  return text;
}

// The plot: a panel per algorithm and direction, the family's thresholds
// marked in each.
PlotData MakePlot(const std::vector<Measured> &results,
                  const std::array<FamilyThresholds, kNumFamilies> &families,
                  const std::vector<size_t> &sizes,
                  const CalibrateOptions &options,
                  const std::string &afalg_note, const std::string &load) {
  PlotData plot;
  plot.title = "aesmux calibrate: throughput by request size, per path";
  plot.subtitle = CpuModel() + ", " + Today() + "; " +
                  (options.quick ? "--quick" : "full run") +
                  (load.empty() ? "" : "; " + load) +
                  (afalg_note.empty() ? "" : "; " + afalg_note);
  plot.sizes = sizes;
  for (const Measured &m : results) {
    plot.panels.push_back(
        PanelOf(m, families[static_cast<size_t>(m.alg.family)]));
  }
  return plot;
}

}  // namespace

std::span<const OptionSpec> CalibrateOptionSpecs() { return kOptions; }

std::vector<size_t> CalibrationSizes(bool quick) {
  // Every fourfold step (--quick), or two per doubling.
  std::vector<size_t> sizes = {16};
  for (size_t size = 32; size <= kLargestSize; size *= 2) {
    if (!quick && size >= 64) sizes.push_back(size / 4 * 3);
    if (!quick || std::countr_zero(size) % 2 == 0) sizes.push_back(size);
  }
  // And the defaults, in multiples of 16 that ECB and CBC take whole.
  for (const size_t length : DefaultLengths()) {
    const size_t rounded = (length + 15) / 16 * 16;
    if (rounded <= kLargestSize) sizes.push_back(rounded);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

int RunCalibrate(const std::vector<std::string> &args) {
  const std::optional<CalibrateOptions> parsed = ParseOptions(args);
  if (!parsed) return kUsageError;
  const CalibrateOptions &options = *parsed;
  // Files that cannot be written are refused now, not after the run.
  for (const std::string &file :
       {options.output, options.plot, PngOf(options.plot)}) {
    const std::string why = CheckWritable(file);
    if (!why.empty()) {
      std::fprintf(stderr, "aesmux calibrate: cannot write %s\n",
                   why.c_str());
      return kFailure;
    }
  }
  // Every path is forced through explicit settings; the environment would
  // override them.
  std::vector<std::string> ignored;
  for (char **e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.starts_with("AESMUX_")) {
      ignored.push_back(entry.substr(0, entry.find('=')));
    }
  }
  for (const std::string &name : ignored) {
    unsetenv(name.c_str());
    std::fprintf(stderr, "aesmux calibrate: ignoring %s\n", name.c_str());
  }

  const double load_start = LoadAverage();
  const uint32_t cpus = core::UsableCpus();
  if (load_start > cpus) {
    std::fprintf(stderr,
                 "aesmux calibrate: this machine is busy (load average %.1f "
                 "on %u CPUs): what is measured now may not hold when it is "
                 "idle\n",
                 load_start, cpus);
  }
  Plan plan;
  if (!SetUpPaths(options, &plan)) return kFailure;
  const std::vector<size_t> sizes = CalibrationSizes(options.quick);
  // The work, in measurements of options.seconds, by path.
  TimeEstimate work;
  for (const core::AlgInfo &alg : core::kAlgs) {
    if (!options.families[static_cast<size_t>(alg.family)]) continue;
    for (const PathUnderTest &path : plan.paths) {
      if (!path.serves[static_cast<size_t>(alg.family)]) continue;
      // mb and threads: encryption only.
      const double weight = path.async          ? 1
                            : path.threads > 0 ? ThreadsSeconds(options) /
                                                     options.seconds
                                               : 2;
      work.Plan(path.name, weight * sizes.size() * options.runs);
    }
  }
  std::string size_list;
  for (const size_t size : sizes) {
    size_list += (size_list.empty() ? "" : " ") + ByteCount(size);
  }
  std::printf("aesmux calibrate: %zu paths (", plan.paths.size());
  for (size_t p = 0; p < plan.paths.size(); ++p) {
    std::printf("%s%s", p == 0 ? "" : ", ", plan.paths[p].name.c_str());
  }
  std::printf("), %zu sizes (%s), %d alternating runs of %g s each\n",
              sizes.size(), size_list.c_str(), options.runs, options.seconds);
  if (!plan.afalg_note.empty()) std::printf("%s\n", plan.afalg_note.c_str());
  std::fflush(stdout);
  if (!RunTrial(plan, options, &work)) return kFailure;
  const double estimated = work.SecondsLeft();
  std::printf("about %s, from a trial of every path just now\n",
              Progress::FormatDuration(estimated).c_str());
  std::fflush(stdout);

  Progress progress("aesmux calibrate", std::move(work));
  std::vector<Measured> results;
  for (const core::AlgInfo &alg : core::kAlgs) {
    if (!options.families[static_cast<size_t>(alg.family)]) continue;
    for (const Direction direction :
         {Direction::kEncrypt, Direction::kDecrypt}) {
      std::optional<Measured> m =
          MeasureAlgorithm(alg, direction, plan, sizes, options, &progress);
      if (!m) return kFailure;
      progress.Print("  " + Describe(*m));
      results.push_back(std::move(*m));
    }
  }
  progress.Finish();
  const double took = progress.Elapsed();
  const std::string load = DescribeLoad(load_start, LoadAverage(), cpus);

  const std::array<FamilyThresholds, kNumFamilies> families =
      Aggregate(results);
  char header[1024];
  std::snprintf(
      header, sizeof(header),
      "# aesmux calibration, written by `aesmux calibrate%s` on %s\n"
      "# %s; OpenSSL %s; aesmux %s, simd tier %s\n"
      "# Each size: %d alternating runs of %g s per path, medians; a path\n"
      "# wins where it is more than %g %% faster. mb: %d streams in ASYNC "
      "jobs;\n# threads: %d threads on %d CPUs, combined or each alone.\n"
      "# Sizes measured: %s\n%s%s%s",
      Invocation(options).c_str(), Today().c_str(), CpuModel().c_str(),
      OpenSSL_version(OPENSSL_VERSION_STRING), plan.version.c_str(),
      plan.best_tier.c_str(), options.runs, options.seconds,
      options.margin * 100, plan.streams, plan.threads, plan.cpus,
      size_list.c_str(), load.empty() ? "" : "# While measuring: ",
      load.c_str(), load.empty() ? "" : "\n");
  const std::string thresholds =
      FormatThresholds(options, header, results, families, plan.afalg_note);
  std::string error;
  if (!WriteFileReplacing(options.output, thresholds, &error)) {
    std::fprintf(stderr, "aesmux calibrate: cannot write %s\n",
                 error.c_str());
    return kFailure;
  }
  std::unique_ptr<OutputFile> svg = OutputFile::Create(options.plot, &error);
  if (svg == nullptr ||
      !svg->Write(RenderSvg(MakePlot(results, families, sizes, options,
                                     plan.afalg_note, load)),
                  &error) ||
      !svg->Commit(&error)) {
    std::fprintf(stderr, "aesmux calibrate: cannot write %s\n",
                 error.c_str());
    return kFailure;
  }

  std::printf("\nmeasured in %s (estimated %s)\n",
              Progress::FormatDuration(took).c_str(),
              Progress::FormatDuration(estimated).c_str());
  std::printf("thresholds (%s): %s\n",
              options.cnf ? "openssl.cnf lines" : "calibration file",
              options.output.c_str());
  std::istringstream written(thresholds);
  for (std::string line; std::getline(written, line);) {
    if (!line.empty() && line[0] != '#') std::printf("  %s\n", line.c_str());
  }
  bool png_ok = true;
  std::printf("plot (SVG): %s\n%s\n", options.plot.c_str(),
              ConvertToPng(options.plot, *svg, &png_ok).c_str());
  if (!options.cnf) {
    std::printf("to use it, add to aesmux's section of openssl.cnf:\n"
                "  calibration_file = %s\n",
                std::filesystem::absolute(options.output).c_str());
  }
  return png_ok ? 0 : kFailure;
}

}  // namespace aesmux::cli
