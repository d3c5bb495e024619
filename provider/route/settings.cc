// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/route/settings.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <limits>

#include "provider/core/stats_file.h"
#include "provider/route/calibration_file.h"
#include "provider/route/excerpt.h"

namespace aesmux::route {
namespace {

constexpr std::string_view kExpectedByteCount =
    "expected a byte count such as 0, 512, 16K or 1M";
constexpr std::string_view kExpectedPolicy = "expected auto|off|force";

std::string ChooseTier(std::string_view requested, kernels::CpuFeatures cpu,
                       Settings *settings) {
  if (requested == "none") {
    settings->tier = nullptr;
    return "";
  }
  if (requested == "auto") {
    settings->tier = kernels::BestTier(cpu);
    return "";
  }
  if (kernels::kTiers.empty()) {
    return "no kernels in this build (" + kernels::WhyNoTiers() +
           "); expected auto|none";
  }
  const kernels::Tier *tier = kernels::TierByName(requested);
  if (tier == nullptr) {
    std::string names;
    for (const kernels::Tier &t : kernels::kTiers) {
      names += "|" + std::string(t.name);
    }
    return "expected auto|none" + names;
  }
  if (!kernels::Supported(*tier, cpu)) {
    return "this CPU lacks " +
           kernels::DescribeCpuFeatures(tier->required & ~cpu);
  }
  settings->tier = tier;
  return "";
}

// How the tier was chosen, once the source of `kernels` is known.
std::string TierReason(const Settings &settings, const SettingValue &in_force,
                       kernels::CpuFeatures cpu) {
  if (in_force.value == "auto") {
    if (settings.tier != nullptr) return "auto: best tier for this CPU";
    if (kernels::kTiers.empty()) {
      return "auto: no kernels in this build (" + kernels::WhyNoTiers() + ")";
    }
    return "auto: this CPU has none of the features of any tier (has: " +
           kernels::DescribeCpuFeatures(cpu) + ")";
  }
  const std::string source =
      in_force.origin == Origin::kEnvironment ? in_force.source : in_force.key;
  return source + "=" + in_force.value;
}

std::optional<AfalgPolicy> ParseAfalgPolicy(std::string_view text) {
  if (text == "auto") return AfalgPolicy::kAuto;
  if (text == "off") return AfalgPolicy::kOff;
  if (text == "force") return AfalgPolicy::kForce;
  return std::nullopt;
}

FamilySettings &FamilyOf(Settings *settings, Family family) {
  return settings->families[static_cast<size_t>(family)];
}

// A byte count into the field `member` of the family's settings.
template <auto member>
std::string ApplyFamilyBytes(std::string_view value, Family family,
                             kernels::CpuFeatures, Settings *settings) {
  const std::optional<uint64_t> bytes = ParseByteCount(value);
  if (!bytes) return std::string(kExpectedByteCount);
  FamilyOf(settings, family).*member = *bytes;
  return "";
}

// An afalg policy for the family.
std::string ApplyFamilyPolicy(std::string_view value, Family family,
                              kernels::CpuFeatures, Settings *settings) {
  const std::optional<AfalgPolicy> policy = ParseAfalgPolicy(value);
  if (!policy) return std::string(kExpectedPolicy);
  FamilyOf(settings, family).afalg = *policy;
  return "";
}

constexpr uint8_t kCbcOnly = 1u << static_cast<unsigned>(Family::kCbc);

// The declaration: every key, in the order they are applied ("afalg" before
// "<family>.afalg", which overrides it).
constexpr SettingKey kSettingKeys[] = {
    // Read before every other key (LoadSettings), which it may set.
    {"calibration_file", 0, "", "none", "/etc/ssl/aesmux-calibration.conf",
     false,
     "A file of thresholds measured on this machine, as `aesmux calibrate` "
     "writes it, read when aesmux loads. It holds `key = value` lines of the "
     "keys a calibration file may set (the thresholds), `#` comments and "
     "blank lines; openssl.cnf and the environment override what it says. "
     "It only tunes: a file that cannot be read (missing, not readable by the "
     "program's user, not a regular file, larger than 64 KiB) or that has a "
     "malformed line or another key is ignored whole, with a warning, and "
     "every threshold keeps its default. A symbolic link is followed unless "
     "it is in a directory that users other than root and the program's own "
     "can write.",
     [](std::string_view value, Family, kernels::CpuFeatures,
        Settings *settings) -> std::string {
       settings->calibration_file = std::string(value);
       return "";
     }},
    // The off switch, for one process (AESMUX_DISABLE=1) or all.
    {"disable", 0, "0", "", "1", false,
     "The off switch: `1` makes aesmux register no algorithm, so that "
     "programs use OpenSSL's default provider. aesmux still loads, reports "
     "its configuration's mistakes as warnings (never stopping a program, "
     "whatever `config_diagnostics` says), and `aesmux info` says it is off "
     "and why. For one program: `AESMUX_DISABLE=1 program ...`.",
     [](std::string_view value, Family, kernels::CpuFeatures,
        Settings *settings) -> std::string {
       if (value != "0" && value != "1") return "expected 0|1";
       settings->off = value == "1" ? "disable = 1" : "";
       return "";
     }},
    {"kernels", 0, "auto", "", "aesni", false,
     "The kernel tier of the simd path: `auto` (the best tier this CPU "
     "has), a tier name (`vaes_avx512`, `vaes_avx2`, `aesni`), or `none` "
     "(every request on the fallback path). A tier the CPU lacks stops aesmux "
     "from loading, naming the features it misses. A build for another "
     "architecture than x86-64 has no kernels: there `auto` and `none` mean "
     "the same, and a tier name stops aesmux from loading.",
     [](std::string_view value, Family, kernels::CpuFeatures cpu,
        Settings *settings) { return ChooseTier(value, cpu, settings); }},
    {"fallback_max_len", kAllFamilies, "0", "", "64", true,
     "Requests of at most this many bytes go to the fallback path "
     "(OpenSSL's default provider inside aesmux); `0`: none. A request is "
     "one update or one `EVP_Cipher` call; a GCM message counts its AAD and "
     "its first payload.",
     ApplyFamilyBytes<&FamilySettings::fallback_max_len>},
    {"afalg", 0, "auto", "", "off", false,
     "The afalg path (the kernel crypto API through AF_ALG sockets and "
     "io_uring) for every family, for machines whose kernel drives a crypto "
     "offload engine (Qualcomm qce, Marvell CESA, AMD CCP, ...). `auto` uses "
     "it only where the kernel's "
     "implementation is an offload driver, never CPU software (`aes-generic`, "
     "`*-aesni`, `*-ce`, ...); `off` never; `force` whatever binds, CPU "
     "software included (for tests, or to move work off the calling "
     "threads). Under `auto` a family is probed on its first request of at "
     "least its `afalg_min_len` (GCM on its first cipher context): on a "
     "machine without an offload driver that costs one read of /proc/crypto "
     "and nothing afterwards. `force` probes when aesmux loads.",
     [](std::string_view value, Family, kernels::CpuFeatures cpu,
        Settings *settings) -> std::string {
       for (size_t f = 0; f < kNumFamilies; ++f) {
         const std::string problem = ApplyFamilyPolicy(
             value, static_cast<Family>(f), cpu, settings);
         if (!problem.empty()) return problem;
       }
       return "";
     }},
    {"afalg", kAllFamilies, "", "afalg's value", "force", false,
     "The afalg path for one family, as `afalg` sets it for all; it "
     "overrides `afalg`.",
     ApplyFamilyPolicy},
    {"afalg_min_len", kAllFamilies, "",
     "16K under auto (2K on a CPU without AES instructions), 0 under force",
     "64K", true,
     "Requests of at least this many bytes go to the afalg path where it "
     "is on for the family (a GCM message counts its AAD and its first "
     "payload). The defaults under `auto` are where an offload engine that "
     "cost the CPU nothing per byte would start to win (BENCHMARKS.md, "
     "measured under emulation): measure on the machine with `aesmux "
     "calibrate`.", ApplyFamilyBytes<&FamilySettings::afalg_min_len>},
    {"afalg_fork", 0, "off", "", "rebuild", false,
     "Whether a forked child may use the afalg path. `off`: never; the "
     "child makes no socket or io_uring system call (it may have entered a "
     "seccomp sandbox, as OpenSSH's pre-authentication child does). "
     "`rebuild`: each child makes its own sockets and ring on first use "
     "(pre-forking servers without such sandboxes, such as nginx's "
     "workers).",
     [](std::string_view value, Family, kernels::CpuFeatures,
        Settings *settings) -> std::string {
       if (value != "off" && value != "rebuild") return "expected off|rebuild";
       settings->afalg_fork_rebuild = value == "rebuild";
       return "";
     }},
    {"afalg_max_fds", 0, "", "a quarter of RLIMIT_NOFILE", "64", false,
     "The most file descriptors the afalg path holds in a process, never "
     "more than a quarter of the soft `RLIMIT_NOFILE`, and never one "
     "numbered in the limit's top quarter. Each key on the path "
     "holds a socket and pools up to two more, each thread's ring holds two; "
     "past the budget, idle pooled sockets are closed, then requests run on "
     "the CPU (counted as `afalg-fallback:fd_budget`).",
     [](std::string_view value, Family, kernels::CpuFeatures,
        Settings *settings) -> std::string {
       const std::optional<uint64_t> count = ParseByteCount(value);
       if (!count || *count == 0) {
         return "expected a number of descriptors such as 16 or 1000";
       }
       settings->afalg_max_fds = *count;
       return "";
     }},
    {"mb_min_len", kCbcOnly, "512", "", "1K", true,
     "CBC encryptions shorter than this are never batched into "
     "multi-buffer lanes. A batched request pauses its ASYNC job once, which "
     "costs more than a short request's work; `aesmux calibrate` measures "
     "where batching starts to win.",
     ApplyFamilyBytes<&FamilySettings::mb_min_len>},
    {"mb_max_len", kCbcOnly, "64K", "", "16K", true,
     "CBC encryptions of at most this many bytes (and at least "
     "`cbc.mb_min_len`) may be batched into multi-buffer lanes (16 streams "
     "per kernel call on VAES CPUs, 8 with AES-NI) with other "
     "requests in flight: other ASYNC jobs', or, from "
     "`cbc.mb_threads_min_len`, those of more threads than CPUs; `0` turns "
     "batching off (a `cbc.mb_min_len` above it is reported: nothing would "
     "be batched). A lone request never waits: it runs at once on the "
     "single-stream kernel.",
     ApplyFamilyBytes<&FamilySettings::mb_max_len>},
    {"mb_threads_min_len", kCbcOnly, "8K", "", "16K", true,
     "Outside an ASYNC job, CBC encryptions shorter than this are never "
     "combined with other threads'. Waiting for a combiner costs a short "
     "request more than the lanes save it (ASYNC jobs batch from "
     "`cbc.mb_min_len`); `0` combines threads' requests of every length, "
     "and `aesmux calibrate` measures where combining starts to win.",
     ApplyFamilyBytes<&FamilySettings::mb_threads_min_len>},
    {"stats_file", 0, "", "none", "/var/tmp/aesmux/stats", false,
     "Where each process that served requests writes its statistics: "
     "`<prefix>.<pid>.<id>`, at exit and, while it serves requests, at most "
     "once a second: its requests and bytes per algorithm and path, the "
     "afalg path's hand-offs by reason, and per family whether the afalg "
     "path was on, and why not. The files of processes that have exited are "
     "folded into one `<prefix>.summary.<uid>` per user by the next process "
     "to write or read them, under a flock of that user's "
     "`<prefix>.lock.<uid>`, so the directory holds one file per live "
     "process and two per user; `aesmux stats` sums them. The directory must "
     "exist and be writable by the processes (the package makes "
     "/var/tmp/aesmux, mode 1777; `install -d -m 1777 /var/tmp/aesmux` "
     "elsewhere); if it is not, or if another user's file holds a user's "
     "summary or lock name (no file of that user's could be folded, so none "
     "is written), each process says so once on stderr, and `aesmux info` "
     "shows it. A prefix must end in a file name (`DIR/STEM`) "
     "short enough for the names made from it, or it is refused.",
     [](std::string_view value, Family, kernels::CpuFeatures,
        Settings *settings) -> std::string {
       if (const char *problem = core::StatsPrefixProblem(value)) {
         return problem;
       }
       settings->stats_file = std::string(value);
       return "";
     }},
};
static_assert(kSettingKeys[0].name == "calibration_file",
              "LoadSettings reads the calibration file first");
// Every key is documented (its reference is printed from here: settings.h).
consteval bool AllDocumented() {
  for (const SettingKey &key : kSettingKeys) {
    if (key.doc.empty() || !key.doc.ends_with('.')) return false;
    if (key.example.empty()) return false;
    if (key.default_value.empty() == key.unset_means.empty()) return false;
  }
  return true;
}
static_assert(AllDocumented(),
              "every key needs a doc (sentences), an example, and either a "
              "default or what leaving it unset means");

// Writes the openssl.cnf key of `key` for `family` (ignored by a global
// key), or with `environment` its variable, a character at a time through
// `put`: the one spelling of both, at compile time (kNameTexts) and at run
// time (ConfigKeyName, EnvironmentName).
template <typename Put>
constexpr void ComposeName(const SettingKey &key, Family family,
                           bool environment, Put put) {
  // ASCII upper case, not toupper(), whose answer depends on the locale.
  auto emit = [&](char c) {
    if (environment && c == '.') c = '_';
    if (environment && c >= 'a' && c <= 'z') {
      c = static_cast<char>(c - 'a' + 'A');
    }
    put(c);
  };
  if (environment) {
    for (char c : std::string_view("AESMUX_")) put(c);
  }
  if (key.families != 0) {
    for (char c : FamilyName(family)) emit(c);
    emit('.');
  }
  for (char c : key.name) emit(c);
}

// Calls `visit(key_index, family)` for every name: the keys in their order,
// a per-family key family by family, a global key once (with kEcb).
template <typename Visit>
constexpr void ForEachName(Visit visit) {
  for (size_t k = 0; k < std::size(kSettingKeys); ++k) {
    const SettingKey &key = kSettingKeys[k];
    for (size_t f = 0; f < kNumFamilies; ++f) {
      if (key.families != 0 && (key.families & (1u << f)) == 0) continue;
      visit(k, static_cast<Family>(f));
      if (key.families == 0) break;
    }
  }
}

consteval size_t CountNames() {
  size_t count = 0;
  ForEachName([&](size_t, Family) { ++count; });
  return count;
}
constexpr size_t kNumNames = CountNames();

// Whose name each entry of kNameTexts is.
struct NameOwner {
  uint8_t key;  // index into kSettingKeys
  Family family;
};

consteval std::array<NameOwner, kNumNames> MakeNameOwners() {
  std::array<NameOwner, kNumNames> owners{};
  size_t i = 0;
  ForEachName([&](size_t k, Family family) {
    owners[i++] = {static_cast<uint8_t>(k), family};
  });
  return owners;
}

// A name that does not fit its array stops the build (at() throws, which a
// constant expression may not).
consteval std::array<SettingNameText, kNumNames> MakeNameTexts() {
  std::array<SettingNameText, kNumNames> texts{};
  size_t i = 0;
  ForEachName([&](size_t k, Family family) {
    size_t key_len = 0, env_len = 0;
    ComposeName(kSettingKeys[k], family, false,
                [&](char c) { texts[i].key.at(key_len++) = c; });
    ComposeName(kSettingKeys[k], family, true,
                [&](char c) { texts[i].env_name.at(env_len++) = c; });
    texts[i].key.at(key_len) = '\0';
    texts[i].env_name.at(env_len) = '\0';
    ++i;
  });
  return texts;
}

// A name of kNameTexts, up to its NUL.
template <size_t N>
std::string_view TextOf(const std::array<char, N> &text) {
  return {text.data(), static_cast<size_t>(
                           std::find(text.begin(), text.end(), '\0') -
                           text.begin())};
}

constexpr std::array<NameOwner, kNumNames> kNameOwners = MakeNameOwners();
// In read-only data, without a pointer for the loader to relocate.
constexpr std::array<SettingNameText, kNumNames> kNameTexts = MakeNameTexts();
static_assert(kNameOwners[0].key == 0, "the calibration file's name first");


// The keys a calibration file may set, by their openssl.cnf name.
bool IsCalibratedKey(std::string_view name) {
  for (size_t i = 0; i < kNumNames; ++i) {
    if (kSettingKeys[kNameOwners[i].key].calibrated &&
        name == TextOf(kNameTexts[i].key)) {
      return true;
    }
  }
  return false;
}

constexpr std::string_view kEnvironmentPrefix = "AESMUX_";

// The keys of a provider's section that OpenSSL reads itself.
constexpr std::string_view kOpensslProviderKeys[] = {"module", "activate",
                                                     "identity", "soft_load"};

// Variables that are not settings but are read: by aesmux, its trace
// (provider/core/trace.cc); by its test suites (tests/) and scripts
// (scripts/), which a process under test has in its environment, every
// name starting with one of kTestPrefixes or ending in "_BUILD" (a build
// directory of scripts/test.sh).
constexpr std::string_view kOtherVariables[] = {"AESMUX_TRACE"};
constexpr std::string_view kTestPrefixes[] = {"AESMUX_TEST_", "AESMUX_FUZZ_"};

// The index into kNameTexts of the openssl.cnf key (or, with
// `environment`, the variable) `name`; kNumNames if none.
size_t IndexOfName(std::string_view name, bool environment) {
  for (size_t i = 0; i < kNumNames; ++i) {
    if (name == (environment ? TextOf(kNameTexts[i].env_name)
                             : TextOf(kNameTexts[i].key))) {
      return i;
    }
  }
  return kNumNames;
}

bool IsReadVariable(std::string_view name) {
  if (IndexOfName(name, true) < kNumNames) return true;
  for (std::string_view other : kOtherVariables) {
    if (name == other) return true;
  }
  for (std::string_view prefix : kTestPrefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return name.ends_with("_BUILD");
}

// The most bytes of a name compared with the known ones: a longer one is
// no misspelling of any, and the comparison's cost grows with its length.
constexpr size_t kMaxComparedName = 64;

// The known key (or variable) nearest to `name`; empty for a name too long
// to compare.
std::string_view Nearest(std::string_view name, bool environment) {
  if (name.size() > kMaxComparedName) return {};
  std::string_view nearest;
  size_t best = ~size_t{0};
  auto consider = [&](std::string_view candidate) {
    const size_t distance = EditDistance(name, candidate);
    if (distance < best) {
      best = distance;
      nearest = candidate;
    }
  };
  for (const SettingNameText &text : kNameTexts) {
    consider(environment ? TextOf(text.env_name) : TextOf(text.key));
  }
  if (environment) {
    for (std::string_view other : kOtherVariables) consider(other);
  } else {
    for (std::string_view key : kOpensslProviderKeys) consider(key);
  }
  return nearest;
}

// Warnings for unknown names, each with the nearest known one; after
// kMaxNamed, only how many more there were.
class UnknownNames {
 public:
  // `what`: "<what>" in "and 3 more unknown <what>".
  UnknownNames(std::string_view what, Problems *problems)
      : what_(what), problems_(problems) {}
  ~UnknownNames() {
    if (count_ > kMaxNamed) {
      problems_->warnings.push_back("and " + std::to_string(count_ - kMaxNamed) +
                                    " more unknown " + std::string(what_));
    }
  }
  UnknownNames(const UnknownNames &) = delete;
  UnknownNames &operator=(const UnknownNames &) = delete;

  void Add(std::string text, std::string_view nearest) {
    if (++count_ > kMaxNamed) return;
    if (!nearest.empty()) {
      text.append(" (did you mean '").append(nearest).append("'?)");
    }
    problems_->warnings.push_back(text + ": ignored");
  }

 private:
  static constexpr size_t kMaxNamed = 16;
  std::string_view what_;
  Problems *problems_;
  size_t count_ = 0;
};

// What is wrong with the first value of `calibration` that its key does not
// take ("<file>:<line>: <key> = '<value>': <why>"); empty if none is.
std::string CheckCalibration(const Calibration &calibration,
                             kernels::CpuFeatures cpu) {
  Settings scratch;
  for (const auto &[name, entry] : calibration) {
    const size_t i = IndexOfName(name, false);
    const std::string problem =
        i == kNumNames ? std::string("not a key")
                       : kSettingKeys[kNameOwners[i].key].apply(
                             entry.value, kNameOwners[i].family, cpu, &scratch);
    if (!problem.empty()) {
      return entry.source + ": " + name + " = " + Excerpt(entry.value) +
             ": " + problem;
    }
  }
  return "";
}

}  // namespace

std::string_view AfalgPolicyName(AfalgPolicy policy) {
  switch (policy) {
    case AfalgPolicy::kAuto: return "auto";
    case AfalgPolicy::kOff: return "off";
    case AfalgPolicy::kForce: return "force";
  }
  return "?";
}

std::string_view OriginName(Origin origin) {
  switch (origin) {
    case Origin::kDefault: return "default";
    case Origin::kCalibration: return "calibration";
    case Origin::kConfig: return "openssl.cnf";
    case Origin::kEnvironment: return "environment";
  }
  return "?";
}

std::span<const SettingKey> SettingKeys() { return kSettingKeys; }

std::string ConfigKeyName(const SettingKey &key, Family family) {
  std::string name;
  ComposeName(key, family, false, [&](char c) { name += c; });
  return name;
}

std::string EnvironmentName(const SettingKey &key, Family family) {
  std::string name;
  ComposeName(key, family, true, [&](char c) { name += c; });
  return name;
}

std::vector<SettingName> SettingNames() {
  std::vector<SettingName> names;
  for (const SettingNameText &text : kNameTexts) {
    names.push_back({text.key.data(), text.env_name.data()});
  }
  return names;
}

std::span<const SettingNameText> SettingNameTexts() { return kNameTexts; }

SourceValues ConfigValuesOf(const ConfigLookup &lookup) {
  SourceValues values;
  for (const SettingNameText &text : kNameTexts) {
    values.push_back(lookup(text.key.data()));
  }
  return values;
}

SourceValues EnvironmentValuesOf(const ConfigLookup &lookup) {
  SourceValues values;
  for (const SettingNameText &text : kNameTexts) {
    values.push_back(lookup(text.env_name.data()));
  }
  return values;
}

SourceValues EnvironmentValuesIn(const char *const *envp) {
  SourceValues values(kNumNames);
  std::array<bool, kNumNames> seen{};
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    if (std::strncmp(*envp, kEnvironmentPrefix.data(),
                     kEnvironmentPrefix.size()) != 0) {
      continue;
    }
    const std::string_view entry(*envp);
    const size_t equals = entry.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, equals);
    for (size_t i = 0; i < kNumNames; ++i) {
      if (name != TextOf(kNameTexts[i].env_name)) continue;
      if (!seen[i] && equals + 1 < entry.size()) {
        values[i] = std::string(entry.substr(equals + 1));
      }
      seen[i] = true;
      break;
    }
  }
  return values;
}

std::optional<uint64_t> ParseByteCount(std::string_view text) {
  size_t digits = 0;
  uint64_t value = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  while (digits < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[digits]))) {
    const uint64_t digit = static_cast<uint64_t>(text[digits] - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  const std::string_view suffix = text.substr(digits);
  unsigned shift = 0;
  if (suffix.empty()) {
    shift = 0;
  } else if (suffix == "K" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M" || suffix == "m") {
    shift = 20;
  } else if (suffix == "G" || suffix == "g") {
    shift = 30;
  } else {
    return std::nullopt;
  }
  if (value > (kMax >> shift)) return std::nullopt;
  return value << shift;
}

std::string Problems::Text() const {
  std::string text;
  for (const std::vector<std::string> *list : {&errors, &warnings}) {
    for (const std::string &problem : *list) {
      if (!text.empty()) text += '\n';
      text += problem;
    }
  }
  return text;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1),
      current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1,
                             previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::optional<Settings> LoadSettings(const ConfigLookup &config,
                                     const ConfigLookup &env,
                                     kernels::CpuFeatures cpu,
                                     Problems *problems) {
  return LoadSettings(ConfigValuesOf(config), EnvironmentValuesOf(env), cpu,
                      problems);
}

std::optional<Settings> LoadSettings(const SourceValues &config,
                                     const SourceValues &env,
                                     kernels::CpuFeatures cpu,
                                     Problems *problems) {
  if (config.size() != kNumNames || env.size() != kNumNames) {
    problems->errors.push_back(
        "internal error: a source without a value for every key");
    return std::nullopt;
  }
  Settings settings;
  Calibration calibration;
  // The value in force of name `i` (kNameTexts), kept by its source; fills
  // in `in_force` but for its value. nullopt when unset.
  auto resolve = [&](size_t i, SettingValue *in_force)
      -> std::optional<std::string_view> {
    const SettingNameText &text = kNameTexts[i];
    in_force->key = TextOf(text.key);
    if (env[i]) {
      in_force->origin = Origin::kEnvironment;
      in_force->source = TextOf(text.env_name);
      return *env[i];
    }
    if (config[i]) {
      in_force->origin = Origin::kConfig;
      return *config[i];
    }
    if (auto it = calibration.find(in_force->key); it != calibration.end()) {
      in_force->origin = Origin::kCalibration;
      in_force->source = it->second.source;
      return it->second.value;
    }
    const std::string_view default_value =
        kSettingKeys[kNameOwners[i].key].default_value;
    if (default_value.empty()) return std::nullopt;
    return default_value;
  };
  // "<where> = '<value>'", where is the key, the variable or the
  // calibration file's line and key.
  auto describe = [](const SettingValue &in_force, std::string_view value) {
    std::string where = in_force.key;
    if (in_force.origin == Origin::kEnvironment) where = in_force.source;
    if (in_force.origin == Origin::kCalibration) {
      where = in_force.source + ": " + in_force.key;
    }
    return where + " = " + Excerpt(value);
  };

  // The calibration file first: every key after it may come from there. It
  // only tunes: one that cannot be used is a warning, not an error.
  SettingValue file;
  if (std::optional<std::string_view> path = resolve(0, &file)) {
    std::string problem;
    std::optional<Calibration> read =
        ReadCalibration(std::string(*path), IsCalibratedKey, &problem);
    if (read) problem = CheckCalibration(*read, cpu);
    if (problem.empty()) {
      calibration = std::move(*read);
    } else {
      problems->warnings.push_back(
          describe(file, *path) + ": " + problem +
          ": the file is ignored, its thresholds keep their defaults");
    }
  }

  std::vector<std::string> errors;
  settings.in_force.resize(kNumNames);
  for (size_t i = 0; i < kNumNames; ++i) {
    const SettingKey &key = kSettingKeys[kNameOwners[i].key];
    SettingValue &in_force = settings.in_force[i];
    if (std::optional<std::string_view> value = resolve(i, &in_force)) {
      const std::string problem =
          key.apply(*value, kNameOwners[i].family, cpu, &settings);
      if (!problem.empty()) {
        errors.push_back(describe(in_force, *value) + ": " + problem);
      }
      in_force.value = *value;
    } else {
      constexpr std::string_view kUnset = "(unset: ";
      in_force.value.reserve(kUnset.size() + key.unset_means.size() + 1);
      in_force.value.append(kUnset).append(key.unset_means).append(")");
    }
  }
  for (const SettingValue &value : settings.in_force) {
    if (value.key == "kernels") {
      settings.tier_reason = TierReason(settings, value, cpu);
    }
    if (value.key == "disable" && !settings.off.empty()) {
      settings.off += " (" + std::string(OriginName(value.origin)) +
                      (value.source.empty() ? "" : ": " + value.source) + ")";
    }
  }
  if (!errors.empty()) {
    if (settings.off.empty()) {
      problems->errors.insert(problems->errors.end(), errors.begin(),
                              errors.end());
      return std::nullopt;
    }
    for (const std::string &error : errors) {
      problems->warnings.push_back(error + ": ignored, aesmux is off");
    }
  }
  // Values each valid alone that together leave a setting without effect:
  // a warning naming both, which stay in force. Batching's range empty
  // while batching is on (`cbc.mb_max_len = 0` is its off switch).
  auto in_force = [&](std::string_view key) {
    const SettingValue *found = nullptr;
    for (const SettingValue &value : settings.in_force) {
      if (value.key == key) found = &value;
    }
    return found;
  };
  auto named = [&](const SettingValue &value) {
    return describe(value, value.value) +
           (value.origin == Origin::kDefault ? " (the default)" : "");
  };
  const FamilySettings &cbc = settings.family(Family::kCbc);
  const SettingValue *mb_min = in_force("cbc.mb_min_len");
  const SettingValue *mb_max = in_force("cbc.mb_max_len");
  if (cbc.mb_max_len != 0 && cbc.mb_min_len > cbc.mb_max_len &&
      mb_min != nullptr && mb_max != nullptr) {
    problems->warnings.push_back(
        named(*mb_min) + " is above " + named(*mb_max) +
        ": no CBC encryption is batched (cbc.mb_max_len = 0 turns "
        "batching off)");
  }
  settings.auto_afalg_min_len = kernels::HasAesInstructions(cpu)
                                    ? kDefaultAutoAfalgMinLen
                                    : kDefaultAutoAfalgMinLenWithoutAes;
  return settings;
}

bool IsOpensslProviderKey(std::string_view key) {
  // The part after a prefix ending in '.', as OpenSSL's skip_dot().
  if (const size_t dot = key.find('.'); dot != std::string_view::npos) {
    key.remove_prefix(dot + 1);
  }
  for (std::string_view name : kOpensslProviderKeys) {
    if (key == name) return true;
  }
  return false;
}

void CheckConfigKeys(std::span<const std::string> keys,
                     std::string_view section, Problems *problems) {
  UnknownNames unknown("keys of aesmux's openssl.cnf section", problems);
  for (const std::string &key : keys) {
    if (IsOpensslProviderKey(key) || IndexOfName(key, false) < kNumNames) {
      continue;
    }
    unknown.Add(std::string(section) + ": unknown key " + Excerpt(key),
                Nearest(key, false));
  }
}

void CheckEnvironment(const char *const *envp, Problems *problems) {
  UnknownNames unknown("AESMUX_* variables", problems);
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    const std::string_view entry(*envp);
    if (!entry.starts_with(kEnvironmentPrefix)) continue;
    const size_t equals = entry.find('=');
    // Unset or empty, or a name aesmux reads.
    if (equals == std::string_view::npos || equals + 1 == entry.size()) continue;
    const std::string_view name = entry.substr(0, equals);
    if (IsReadVariable(name)) continue;
    unknown.Add("environment: " + Excerpt(name) +
                    " is not a variable aesmux reads",
                Nearest(name, true));
  }
}

}  // namespace aesmux::route
