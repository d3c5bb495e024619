// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Router settings: every configuration key aesmux understands, declared once
// (SettingKeys(): name, default, documentation, parser), parsed eagerly when
// the provider loads. Their reference (aesmux(7), docs/settings.md, the
// settings of openssl.cnf.example, README's table) is printed from this
// declaration by docs/settings_reference.cc; docs_drift_test fails when a
// checked-in copy differs.
//
// Sources, in increasing priority: built-in defaults, a calibration file
// (thresholds measured by `aesmux calibrate`), the provider's section of
// openssl.cnf, environment variables ("AESMUX_" and the key in capitals,
// '.' as '_': cbc.fallback_max_len is AESMUX_CBC_FALLBACK_MAX_LEN). The
// calibration file is named by the key calibration_file (openssl.cnf or
// environment).
//
// Every mistake is found, not only the first (Problems): a value that does
// not parse is an error, which keeps aesmux from loading, named with the
// key (or the variable, or the file and line) and the value; a calibration
// file that cannot be read or parsed is a warning, and its thresholds are
// ignored (tuning never turns the accelerator off); so are a key of
// aesmux's openssl.cnf section and an AESMUX_* variable that aesmux does
// not know (CheckConfigKeys, CheckEnvironment), each named with the
// nearest one it knows. With `disable = 1` every error is a warning:
// aesmux is off whatever else the configuration says.
//
// The calibration file holds lines "key = value" of the keys marked
// `calibrated` (thresholds), '#' comments and blank lines (calibration_file.h).
//
// Per-family keys exist for ecb, cbc, ctr, xts and gcm. Byte counts are
// decimal with an optional K, M or G suffix (powers of 1024), at most
// 2^64 - 1 bytes.
#ifndef AESMUX_PROVIDER_ROUTE_SETTINGS_H_
#define AESMUX_PROVIDER_ROUTE_SETTINGS_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/settings.h belongs to a layer above the one that includes it"
#endif

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/tiers.h"
#include "provider/core/algorithm.h"

namespace aesmux::route {

// The core vocabulary (provider/core/algorithm.h), spoken throughout the
// router and its engines.
using core::Alg;
using core::AlgInfo;
using core::Direction;
using core::Family;
using core::Handoff;
using core::Info;
using core::kAlgs;
using core::kNumAlgs;
using core::kNumFamilies;
using core::Path;
using core::Segment;

enum class AfalgPolicy : uint8_t { kAuto, kOff, kForce };

std::string_view AfalgPolicyName(AfalgPolicy policy);

struct FamilySettings {
  // Requests of at most this many bytes go to the fallback path; 0: never.
  uint64_t fallback_max_len = 0;
  AfalgPolicy afalg = AfalgPolicy::kAuto;
  // Requests of at least this many bytes go to the afalg path (when it is
  // on for the family); unset: the policy's default.
  std::optional<uint64_t> afalg_min_len;
  // Requests of at least mb_min_len and at most mb_max_len bytes may be
  // batched into multi-buffer lanes with concurrent requests; mb_max_len 0:
  // never. (CBC encryption only: each request pauses its ASYNC job once,
  // which costs more than a short request's work.)
  uint64_t mb_min_len = 0;
  uint64_t mb_max_len = 0;
  // Outside an ASYNC job, only requests of at least this many bytes (and
  // within the two above) are combined with other threads' (CBC only):
  // shorter ones lose more waiting for a combiner than lanes win them
  // (BENCHMARKS.md, "How much do multi-buffer lanes and threads gain?").
  uint64_t mb_threads_min_len = 0;
};

// afalg_min_len when unset, under auto (an offload driver was found), by
// whether the CPU has AES instructions (AES-NI, the ARMv8 Crypto
// Extensions), which aesmux's kernels or OpenSSL's own code then use. No
// offload hardware was measured: each is the request length from which an
// offload engine that cost the CPU nothing per byte would beat the CPU's
// path, given what an AF_ALG request costs (afalg_bench --vs-cpu on
// Debian's arm64 kernel under qemu TCG, BENCHMARKS.md: emulation numbers,
// a starting point), to a power of two. A real engine also takes time per
// byte, which moves its break-even up; an engine also spares the CPU,
// which the kernel's own drivers weigh too (docs: qce's aes_sw_max_len).
// With AES instructions: the power of two within the break-evens measured
// on arm64 and above amd64's (BENCHMARKS.md, "What does the afalg path
// cost, and when does it pay?").
inline constexpr uint64_t kDefaultAutoAfalgMinLen = 16 * 1024;
// Without (Arm boards without the Crypto Extensions, where OpenSSL runs its
// NEON code): the power of two just above the break-evens measured there.
inline constexpr uint64_t kDefaultAutoAfalgMinLenWithoutAes = 2 * 1024;

// Where the value of a setting in force came from, in increasing priority.
enum class Origin : uint8_t { kDefault, kCalibration, kConfig, kEnvironment };

// "default", "calibration", "openssl.cnf", "environment".
std::string_view OriginName(Origin origin);

// One key's value in force, for people and for the provider's get_params.
struct SettingValue {
  std::string key;    // "cbc.fallback_max_len"
  std::string value;  // as given; for a key left unset, what that means
  Origin origin = Origin::kDefault;
  // Which variable (environment) or "<file>:<line>" (calibration file);
  // empty otherwise.
  std::string source;
};

struct Settings {
  // Why aesmux is off (`disable = 1`: it registers no algorithm, and
  // programs use OpenSSL's default provider), as "disable = 1 (<origin>)";
  // empty when it is on.
  std::string off;
  // The kernel tier for every key, single-stream and multi-buffer, or
  // nullptr when kernels are off (forced off, or the CPU lacks what the
  // lowest tier needs).
  const kernels::Tier *tier = nullptr;
  // How the tier was chosen, for diagnostics ("auto", "forced", "none", …).
  std::string tier_reason;
  std::array<FamilySettings, kNumFamilies> families{};
  // Prefix of the statistics file written at exit; empty: none.
  std::string stats_file;
  // Whether a forked child may set up its own AF_ALG sockets and io_uring
  // ring (afalg_fork = rebuild) or keeps the afalg path off (off).
  bool afalg_fork_rebuild = false;
  // afalg_min_len of the families that leave it unset, under auto: one of
  // the defaults above, for this CPU.
  uint64_t auto_afalg_min_len = kDefaultAutoAfalgMinLen;
  // The most descriptors the afalg path may hold; 0: a quarter of
  // RLIMIT_NOFILE only (provider/afalg/fd_budget.h), which also caps a
  // larger value.
  uint64_t afalg_max_fds = 0;
  // The calibration file read at load; empty: none.
  std::string calibration_file;
  // Every key with its value in force and where it came from, in the order
  // of SettingKeys() (per-family keys family by family).
  std::vector<SettingValue> in_force;

  const FamilySettings &family(Family f) const {
    return families[static_cast<size_t>(f)];
  }
};

// The declaration of one configuration key.
struct SettingKey {
  // The key; for a per-family key the part after "<family>.".
  std::string_view name;
  // A bit per Family (1 << family) that has this key; 0: a global key.
  uint8_t families;
  // The value when no source sets it; empty: unset (see unset_means).
  std::string_view default_value;
  // For people, what an unset key means ("afalg's value").
  std::string_view unset_means;
  // A good value other than the default, as openssl.cnf.example shows.
  std::string_view example;
  // Whether a calibration file may set it (measured thresholds only).
  bool calibrated;
  // For people: what the key does and takes, in sentences, `code` in
  // backquotes. The first sentence alone summarises it (README's table).
  // The default, variable, ENGINE control and example come from the other
  // fields; byte counts are explained once for all keys.
  std::string_view doc;
  // Applies a value to `settings` for `family` (ignored by global keys);
  // returns what is wrong with the value, or "" when it is good.
  std::string (*apply)(std::string_view value, Family family,
                       kernels::CpuFeatures cpu, Settings *settings);
};

inline constexpr uint8_t kAllFamilies = (1u << kNumFamilies) - 1;

// Every key, in the order they are applied.
std::span<const SettingKey> SettingKeys();

// The openssl.cnf key ("cbc.afalg") and environment variable
// ("AESMUX_CBC_AFALG") of `key` for `family` (ignored for global keys).
std::string ConfigKeyName(const SettingKey &key, Family family);
std::string EnvironmentName(const SettingKey &key, Family family);

// A configuration key and the environment variable that overrides it.
struct SettingName {
  std::string key;       // "cbc.fallback_max_len"
  std::string env_name;  // "AESMUX_CBC_FALLBACK_MAX_LEN"
};

// Every key of SettingKeys(), per-family keys family by family: for front
// ends that must list them (the ENGINE's control commands).
std::vector<SettingName> SettingNames();

// The same names as NUL-terminated text made at compile time, for a source
// that looks every name up at once (the core's get_params, the
// environment) without building strings at load.
struct SettingNameText {
  std::array<char, 32> key;       // "cbc.fallback_max_len"
  std::array<char, 40> env_name;  // "AESMUX_CBC_FALLBACK_MAX_LEN"
};
std::span<const SettingNameText> SettingNameTexts();

// One source's value of every name, in the order of SettingNameTexts();
// nullopt: the source leaves it unset.
using SourceValues = std::vector<std::optional<std::string>>;

// Returns the value of a configuration key, or nullopt when it is unset.
using ConfigLookup =
    std::function<std::optional<std::string>(std::string_view key)>;

// A source that answers name by name, asked for every configuration key
// (ConfigValuesOf) or every environment variable (EnvironmentValuesOf).
SourceValues ConfigValuesOf(const ConfigLookup &lookup);
SourceValues EnvironmentValuesOf(const ConfigLookup &lookup);

// The AESMUX_* variables of an environment block ("NAME=value" strings,
// null-terminated, as `environ`), read in one pass: the first entry of a
// name counts, as getenv() finds it; unset and empty are the same.
SourceValues EnvironmentValuesIn(const char *const *envp);

// What is wrong with a configuration, each entry one mistake in one line,
// naming where it is (the key, the variable, the file and line).
struct Problems {
  // Values aesmux cannot use: it does not load.
  std::vector<std::string> errors;
  // What aesmux ignores, loading with the rest.
  std::vector<std::string> warnings;

  bool empty() const { return errors.empty() && warnings.empty(); }
  // Every entry, errors first, one a line.
  std::string Text() const;
};

// Builds the settings from the provider's configuration section (`config`),
// the environment (`env`) and the calibration file one of them names, for
// a CPU with `cpu` features, adding every mistake found to `problems`.
// Returns nullopt when it found an error (and `disable` is not 1).
std::optional<Settings> LoadSettings(const SourceValues &config,
                                     const SourceValues &env,
                                     kernels::CpuFeatures cpu,
                                     Problems *problems);
// The same with sources looked up name by name (`env` by variable name).
std::optional<Settings> LoadSettings(const ConfigLookup &config,
                                     const ConfigLookup &env,
                                     kernels::CpuFeatures cpu,
                                     Problems *problems);

// Edits (insertions, deletions, substitutions, swaps of neighbours) that
// make `a` into `b`: the optimal string alignment distance. Costs
// a.size() * b.size(): compare short names only.
size_t EditDistance(std::string_view a, std::string_view b);

// OpenSSL reads these keys of a provider's section itself (crypto/
// provider_conf.c, 3.0 to 3.6), also after a prefix ending in '.'.
bool IsOpensslProviderKey(std::string_view key);

// Adds a warning to `problems` for each of `keys` (the keys of aesmux's
// openssl.cnf section, `section` naming it in messages: "<file> [<name>]")
// that is neither a setting nor one of OpenSSL's, with the nearest key
// that is (by edit distance). At most 16 are named, then how many more.
void CheckConfigKeys(std::span<const std::string> keys,
                     std::string_view section, Problems *problems);

// The same for the AESMUX_* variables of an environment block ("NAME=value"
// strings, null-terminated, as `environ`) that aesmux does not read; an
// empty one is unset. AESMUX_TRACE (provider/core/trace.h) and the
// variables of aesmux's test suites and scripts (AESMUX_TEST_*,
// AESMUX_FUZZ_*, AESMUX_*_BUILD, ...) are read, not settings.
void CheckEnvironment(const char *const *envp, Problems *problems);

// Parses a byte count ("4096", "16K", "1M"); nullopt if malformed.
std::optional<uint64_t> ParseByteCount(std::string_view text);

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_SETTINGS_H_
