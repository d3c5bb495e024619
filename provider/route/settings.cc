#include "provider/route/settings.h"

#include <cctype>
#include <limits>

namespace aesmux::route {
namespace {

// The value of `key` from the environment if set there, else from the
// configuration; `source` names where it came from, for messages.
std::optional<std::string> Lookup(const ConfigLookup &config,
                                  const ConfigLookup &env,
                                  std::string_view key,
                                  std::string_view env_name,
                                  std::string *source) {
  if (auto value = env(env_name)) {
    *source = std::string(env_name);
    return value;
  }
  if (auto value = config(key)) {
    *source = std::string(key);
    return value;
  }
  return std::nullopt;
}

std::string EnvName(std::string_view family, std::string_view suffix) {
  std::string name = "AESMUX_";
  for (char c : family) name += static_cast<char>(std::toupper(c));
  name += '_';
  name += suffix;
  return name;
}

bool ChooseTier(std::string_view requested, kernels::CpuFeatures cpu,
                std::string_view source, Settings *settings,
                std::string *error) {
  if (requested == "none") {
    settings->tier = nullptr;
    settings->tier_reason = std::string(source) + "=none";
    return true;
  }
  if (requested == "auto") {
    settings->tier = kernels::BestTier(cpu);
    settings->tier_reason =
        settings->tier != nullptr ? "auto: best tier for this CPU"
        : kernels::kTiers.empty()
            ? "auto: no kernels in this build (" + kernels::WhyNoTiers() + ")"
            : "auto: this CPU has none of the features of any tier (has: " +
                  kernels::DescribeCpuFeatures(cpu) + ")";
    return true;
  }
  if (kernels::kTiers.empty()) {
    *error = std::string(source) + " = '" + std::string(requested) +
             "': no kernels in this build (" + kernels::WhyNoTiers() +
             "); expected auto|none";
    return false;
  }
  const kernels::Tier *tier = kernels::TierByName(requested);
  if (tier == nullptr) {
    std::string names;
    for (const kernels::Tier &t : kernels::kTiers) {
      names += std::string(t.name) + "|";
    }
    *error = std::string(source) + " = '" + std::string(requested) +
             "': expected auto|none|" + names.substr(0, names.size() - 1);
    return false;
  }
  if (!kernels::Supported(*tier, cpu)) {
    *error = std::string(source) + " = '" + std::string(requested) +
             "': this CPU lacks " +
             kernels::DescribeCpuFeatures(tier->required & ~cpu);
    return false;
  }
  settings->tier = tier;
  settings->tier_reason = std::string(source) + "=" + std::string(requested);
  return true;
}

std::optional<AfalgPolicy> ParseAfalgPolicy(std::string_view text) {
  if (text == "auto") return AfalgPolicy::kAuto;
  if (text == "off") return AfalgPolicy::kOff;
  if (text == "force") return AfalgPolicy::kForce;
  return std::nullopt;
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

std::optional<Settings> LoadSettings(const ConfigLookup &config,
                                     const ConfigLookup &env,
                                     kernels::CpuFeatures cpu,
                                     std::string *error) {
  Settings settings;
  std::string source = "default";

  std::string tier_name = "auto";
  if (auto value = Lookup(config, env, "kernels", "AESMUX_KERNELS", &source)) {
    tier_name = *value;
  }
  if (!ChooseTier(tier_name, cpu, source, &settings, error)) {
    return std::nullopt;
  }

  if (settings.tier != nullptr) {
    settings.mb_tier = kernels::mb::MbTierByName(settings.tier->name);
  }
  settings.auto_afalg_min_len = kernels::HasAesInstructions(cpu)
                                    ? kDefaultAutoAfalgMinLen
                                    : kDefaultAutoAfalgMinLenWithoutAes;
  settings.families[static_cast<size_t>(Family::kCbc)].mb_max_len =
      kDefaultCbcMbMaxLen;

  // A byte count from `key` (or its environment variable) into `*out`.
  auto read_bytes = [&](const std::string &key, const std::string &env_name,
                        uint64_t *out) {
    auto value = Lookup(config, env, key, env_name, &source);
    if (!value) return true;
    auto bytes = ParseByteCount(*value);
    if (!bytes) {
      *error = source + " = '" + *value +
               "': expected a byte count such as 0, 512, 16K or 1M";
      return false;
    }
    *out = *bytes;
    return true;
  };
  for (size_t f = 0; f < kNumFamilies; ++f) {
    const std::string family(kFamilyNames[f]);
    if (!read_bytes(family + ".fallback_max_len",
                    EnvName(family, "FALLBACK_MAX_LEN"),
                    &settings.families[f].fallback_max_len)) {
      return std::nullopt;
    }
  }
  if (!read_bytes("cbc.mb_max_len", "AESMUX_CBC_MB_MAX_LEN",
                  &settings.families[static_cast<size_t>(Family::kCbc)]
                       .mb_max_len)) {
    return std::nullopt;
  }

  AfalgPolicy afalg = AfalgPolicy::kAuto;
  if (auto value = Lookup(config, env, "afalg", "AESMUX_AFALG", &source)) {
    auto policy = ParseAfalgPolicy(*value);
    if (!policy) {
      *error = source + " = '" + *value + "': expected auto|off|force";
      return std::nullopt;
    }
    afalg = *policy;
  }
  for (size_t f = 0; f < kNumFamilies; ++f) {
    const std::string family(kFamilyNames[f]);
    settings.families[f].afalg = afalg;
    if (auto value = Lookup(config, env, family + ".afalg",
                            EnvName(family, "AFALG"), &source)) {
      auto policy = ParseAfalgPolicy(*value);
      if (!policy) {
        *error = source + " = '" + *value + "': expected auto|off|force";
        return std::nullopt;
      }
      settings.families[f].afalg = *policy;
    }
    if (auto value = Lookup(config, env, family + ".afalg_min_len",
                            EnvName(family, "AFALG_MIN_LEN"), &source)) {
      auto bytes = ParseByteCount(*value);
      if (!bytes) {
        *error = source + " = '" + *value +
                 "': expected a byte count such as 0, 512, 16K or 1M";
        return std::nullopt;
      }
      settings.families[f].afalg_min_len = *bytes;
    }
  }
  if (auto value =
          Lookup(config, env, "afalg_fork", "AESMUX_AFALG_FORK", &source)) {
    if (*value != "off" && *value != "rebuild") {
      *error = source + " = '" + *value + "': expected off|rebuild";
      return std::nullopt;
    }
    settings.afalg_fork_rebuild = *value == "rebuild";
  }
  if (auto value = Lookup(config, env, "afalg_max_fds",
                          "AESMUX_AFALG_MAX_FDS", &source)) {
    auto count = ParseByteCount(*value);
    if (!count || *count == 0) {
      *error = source + " = '" + *value +
               "': expected a number of descriptors such as 16 or 1000";
      return std::nullopt;
    }
    settings.afalg_max_fds = *count;
  }

  if (auto value =
          Lookup(config, env, "stats_file", "AESMUX_STATS_FILE", &source)) {
    settings.stats_file = *value;
  }
  return settings;
}

std::vector<SettingName> SettingNames() {
  // LoadSettings asks the environment, then the configuration, for each key
  // it knows; answering nothing, it asks for all of them.
  std::vector<std::string> keys;
  std::vector<std::string> env_names;
  std::string error;
  LoadSettings(
      [&](std::string_view key) -> std::optional<std::string> {
        keys.emplace_back(key);
        return std::nullopt;
      },
      [&](std::string_view env_name) -> std::optional<std::string> {
        env_names.emplace_back(env_name);
        return std::nullopt;
      },
      kernels::CpuFeatures{}, &error);
  std::vector<SettingName> names;
  for (size_t i = 0; i < keys.size() && i < env_names.size(); ++i) {
    names.push_back({keys[i], env_names[i]});
  }
  return names;
}

}  // namespace aesmux::route
