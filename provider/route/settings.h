// Router settings: every configuration key aesmux understands, declared once
// here, parsed eagerly when the provider loads.
//
// Sources, in increasing priority: built-in defaults, the provider's section
// of openssl.cnf (keys as below), environment variables. A value that does
// not parse makes the provider refuse to load, with a message naming the key.
//
//   key (openssl.cnf)          environment                     default
//   kernels                    AESMUX_KERNELS                  auto
//   <family>.fallback_max_len  AESMUX_<FAMILY>_FALLBACK_MAX_LEN 0 (never)
//   afalg                      AESMUX_AFALG                    auto
//   <family>.afalg             AESMUX_<FAMILY>_AFALG           (afalg)
//   <family>.afalg_min_len     AESMUX_<FAMILY>_AFALG_MIN_LEN   (see below)
//   afalg_fork                 AESMUX_AFALG_FORK               off
//   afalg_max_fds              AESMUX_AFALG_MAX_FDS            (see below)
//   cbc.mb_max_len             AESMUX_CBC_MB_MAX_LEN           64K
//   stats_file                 AESMUX_STATS_FILE               (none)
//
// <family> is one of ecb, cbc, ctr, xts, gcm. Byte counts are decimal with an
// optional K, M or G suffix (powers of 1024).
//
// afalg policies: off (never), auto (only when the kernel's implementation
// is an offload driver, not CPU software), force (whatever binds). Requests
// of at least afalg_min_len bytes go to the afalg path; unset, it is 16K
// under auto on a CPU with AES instructions, 2K on one without, and 0
// (every non-empty request) under force. afalg_max_fds caps the
// descriptors the afalg path holds in the process; it is always at most a
// quarter of RLIMIT_NOFILE (provider/afalg/fd_budget.h), which is also the
// default.
#ifndef AESMUX_PROVIDER_ROUTE_SETTINGS_H_
#define AESMUX_PROVIDER_ROUTE_SETTINGS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/mb/lane_manager.h"
#include "kernels/tiers.h"
#include "provider/route/algorithm.h"

namespace aesmux::route {

enum class AfalgPolicy : uint8_t { kAuto, kOff, kForce };

std::string_view AfalgPolicyName(AfalgPolicy policy);

struct FamilySettings {
  // Requests of at most this many bytes go to the fallback path; 0: never.
  uint64_t fallback_max_len = 0;
  AfalgPolicy afalg = AfalgPolicy::kAuto;
  // Requests of at least this many bytes go to the afalg path (when it is
  // on for the family); unset: the policy's default.
  std::optional<uint64_t> afalg_min_len;
  // Requests of at most this many bytes may be batched into multi-buffer
  // lanes with concurrent requests; 0: never. (CBC encryption only.)
  uint64_t mb_max_len = 0;
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
// With AES instructions: break-even measured at 13 KiB (CTR) to 20 KiB
// (CBC) on arm64, 5.3 to 7.4 KiB on amd64 (where it was 4K before).
inline constexpr uint64_t kDefaultAutoAfalgMinLen = 16 * 1024;
// Without (Arm boards without the Crypto Extensions, where OpenSSL runs its
// NEON code): break-even at 1.3 KiB (CTR) to 1.8 KiB (CBC).
inline constexpr uint64_t kDefaultAutoAfalgMinLenWithoutAes = 2 * 1024;

inline constexpr uint64_t kDefaultCbcMbMaxLen = 64 * 1024;

struct Settings {
  // The kernel tier for every key, or nullptr when kernels are off (forced
  // off, or the CPU lacks what the lowest tier needs).
  const kernels::Tier *tier = nullptr;
  // The multi-buffer kernels of the same tier, or nullptr.
  const kernels::mb::MbTier *mb_tier = nullptr;
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
  // RLIMIT_NOFILE only.
  uint64_t afalg_max_fds = 0;

  const FamilySettings &family(Family f) const {
    return families[static_cast<size_t>(f)];
  }
};

// Returns the value of a configuration key, or nullopt when it is unset.
using ConfigLookup =
    std::function<std::optional<std::string>(std::string_view key)>;

// Builds the settings from the provider's configuration section (`config`)
// and the environment (`env`, looked up by variable name) for a CPU with
// `cpu` features. Returns nullopt and a message in `error` when a value is
// invalid.
std::optional<Settings> LoadSettings(const ConfigLookup &config,
                                     const ConfigLookup &env,
                                     kernels::CpuFeatures cpu,
                                     std::string *error);

// A configuration key and the environment variable that overrides it.
struct SettingName {
  std::string key;       // "cbc.fallback_max_len"
  std::string env_name;  // "AESMUX_CBC_FALLBACK_MAX_LEN"
};

// Every key LoadSettings reads, in its order: for front ends that must list
// them (the ENGINE's control commands), so that a key added to LoadSettings
// needs no second list.
std::vector<SettingName> SettingNames();

// Parses a byte count ("4096", "16K", "1M"); nullopt if malformed.
std::optional<uint64_t> ParseByteCount(std::string_view text);

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_SETTINGS_H_
