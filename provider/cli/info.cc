// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/info.h"

#include <openssl/conf.h>
#include <openssl/crypto.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "provider/cli/args.h"
#include "provider/cli/json.h"
#include "provider/cli/provider_handle.h"
#include "provider/core/algorithm.h"

namespace aesmux::cli {
namespace {

// The fields of a tab-separated line.
std::vector<std::string> Fields(const std::string &line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  std::string field;
  while (std::getline(in, field, '\t')) fields.push_back(field);
  return fields;
}

// What `aesmux info` shows, gathered from the provider.
struct Info {
  std::string version;
  bool active = false;  // openssl.cnf activates aesmux
  std::string off;      // why aesmux registers no algorithm; empty: it does
  std::vector<std::string> problems;  // what it ignored of its configuration
  std::string config_file;
  std::string openssl;
  std::string modules_dir;
  std::string architecture;
  std::string paths;
  std::string cpu_features;
  std::vector<std::vector<std::string>> tiers;     // name, state
  std::string tier, tier_reason, mb_tier;
  std::string stats_file;  // where the statistics go, or why not
  std::vector<std::pair<std::string, std::string>> routes;  // alg, route
  std::vector<std::pair<std::string, std::string>> afalg;   // family, state
  std::vector<std::vector<std::string>> settings;  // key, value, origin, src
};

Info Gather(const ProviderHandle &aesmux) {
  Info info;
  info.version = aesmux.Param("version");
  info.active = aesmux.activated_by_config();
  info.off = aesmux.Param("off");
  info.problems = aesmux.ParamLines("problems");
  char *config_file = CONF_get1_default_config_file();
  info.config_file = config_file != nullptr ? config_file : "";
  OPENSSL_free(config_file);
  info.openssl = OpenSSL_version(OPENSSL_VERSION);
  const char *modules = std::getenv("OPENSSL_MODULES");
  info.modules_dir =
      modules != nullptr ? modules : OPENSSL_info(OPENSSL_INFO_MODULES_DIR);
  info.architecture = aesmux.Param("architecture");
  info.paths = aesmux.Param("paths");
  info.cpu_features = aesmux.Param("cpu-features");
  for (const std::string &line : aesmux.ParamLines("tiers")) {
    info.tiers.push_back(Fields(line));
  }
  info.tier = aesmux.Param("tier");
  info.tier_reason = aesmux.Param("tier-reason");
  info.mb_tier = aesmux.Param("mb-tier");
  info.stats_file = aesmux.Param("stats-file");
  for (const core::AlgInfo &alg : core::kAlgs) {
    const std::string name(alg.name);
    info.routes.emplace_back(name, aesmux.Param("route." + name));
  }
  for (std::string_view family : core::kFamilyNames) {
    info.afalg.emplace_back(std::string(family),
                            aesmux.Param("afalg." + std::string(family)));
  }
  for (const std::string &line : aesmux.ParamLines("settings")) {
    std::vector<std::string> fields = Fields(line);
    fields.resize(4);
    info.settings.push_back(std::move(fields));
  }
  return info;
}

void PrintText(const Info &info) {
  std::printf("aesmux %s, ", info.version.c_str());
  if (info.active) {
    std::printf("active through openssl.cnf (%s)\n", info.config_file.c_str());
  } else {
    std::printf(
        "NOT active in openssl.cnf (%s): loaded by name for this report only;\n"
        "  programs use it once openssl.cnf loads it (see openssl.cnf.example)\n",
        info.config_file.c_str());
  }
  if (!info.off.empty()) {
    std::printf("%-14s %s: aesmux registers no algorithm, so programs use "
                "OpenSSL's default provider\n",
                "OFF", info.off.c_str());
  }
  if (info.problems.empty()) {
    std::printf("%-14s none\n", "problems");
  } else {
    std::printf("%-14s %zu in its configuration, each ignored "
                "(this command exits with status 1):\n",
                "PROBLEMS", info.problems.size());
    for (const std::string &problem : info.problems) {
      std::printf("  %s\n", problem.c_str());
    }
  }
  std::printf("%-14s %s (modules: %s)\n", "OpenSSL", info.openssl.c_str(),
              info.modules_dir.c_str());
  std::printf("%-14s %s\n", "architecture", info.architecture.c_str());
  std::printf("%-14s %s\n", "paths", info.paths.c_str());
  std::printf("%-14s %s\n", "CPU features", info.cpu_features.c_str());
  for (size_t i = 0; i < info.tiers.size(); ++i) {
    const std::vector<std::string> &tier = info.tiers[i];
    std::printf("%-14s %s: %s\n", i == 0 ? "kernel tiers" : "",
                tier.at(0).c_str(), tier.size() > 1 ? tier[1].c_str() : "");
  }
  std::printf("%-14s %s (%s)\n", "tier in use", info.tier.c_str(),
              info.tier_reason.c_str());
  std::printf("%-14s %s\n", "multi-buffer", info.mb_tier.c_str());
  std::printf("%-14s %s\n", "statistics", info.stats_file.c_str());
  std::printf("\nroute per algorithm\n");
  for (const auto &[alg, route] : info.routes) {
    std::printf("  %-12s %s\n", alg.c_str(), route.c_str());
  }
  std::printf("\nafalg probe per family\n");
  for (const auto &[family, state] : info.afalg) {
    std::printf("  %-4s %s\n", family.c_str(), state.c_str());
  }
  std::printf(
      "\nsettings in force (default < calibration < openssl.cnf < "
      "environment)\n  %-22s %-16s %s\n",
      "key", "value", "origin");
  for (const std::vector<std::string> &setting : info.settings) {
    std::printf("  %-22s %-16s %s", setting[0].c_str(), setting[1].c_str(),
                setting[2].c_str());
    if (!setting[3].empty()) std::printf(" (%s)", setting[3].c_str());
    std::printf("\n");
  }
}

// "  \"<name>\": <value>," with `value` already JSON.
void Field(const char *name, const std::string &value, bool last = false) {
  std::printf("  \"%s\": %s%s\n", name, value.c_str(), last ? "" : ",");
}

// "  \"<name>\": [ one object a line ],".
void Array(const char *name, const std::vector<std::string> &items,
           bool last = false) {
  std::printf("  \"%s\": [\n", name);
  for (size_t i = 0; i < items.size(); ++i) {
    std::printf("    %s%s\n", items[i].c_str(),
                i + 1 < items.size() ? "," : "");
  }
  std::printf("  ]%s\n", last ? "" : ",");
}

void PrintJson(const Info &info) {
  std::printf("{\n");
  Field("version", JsonString(info.version));
  Field("active_in_openssl_cnf", info.active ? "true" : "false");
  Field("off", JsonString(info.off));
  std::vector<std::string> items;
  for (const std::string &problem : info.problems) {
    items.push_back(JsonString(problem));
  }
  Array("problems", items);
  Field("openssl_cnf", JsonString(info.config_file));
  Field("openssl", JsonString(info.openssl));
  Field("modules_dir", JsonString(info.modules_dir));
  Field("architecture", JsonString(info.architecture));
  Field("paths", JsonString(info.paths));
  Field("cpu_features", JsonString(info.cpu_features));
  items.clear();
  for (const std::vector<std::string> &tier : info.tiers) {
    items.push_back("{\"name\": " + JsonString(tier.at(0)) + ", \"state\": " +
                    JsonString(tier.size() > 1 ? tier[1] : "") + "}");
  }
  Array("tiers", items);
  Field("tier", JsonString(info.tier));
  Field("tier_reason", JsonString(info.tier_reason));
  Field("mb_tier", JsonString(info.mb_tier));
  Field("stats_file", JsonString(info.stats_file));
  items.clear();
  for (const auto &[alg, route] : info.routes) {
    items.push_back("{\"algorithm\": " + JsonString(alg) +
                    ", \"route\": " + JsonString(route) + "}");
  }
  Array("routes", items);
  items.clear();
  for (const auto &[family, state] : info.afalg) {
    items.push_back("{\"family\": " + JsonString(family) +
                    ", \"state\": " + JsonString(state) + "}");
  }
  Array("afalg", items);
  items.clear();
  for (const std::vector<std::string> &setting : info.settings) {
    items.push_back("{\"key\": " + JsonString(setting[0]) +
                    ", \"value\": " + JsonString(setting[1]) +
                    ", \"origin\": " + JsonString(setting[2]) +
                    ", \"source\": " + JsonString(setting[3]) + "}");
  }
  Array("settings", items, true);
  std::printf("}\n");
}

constexpr OptionSpec kOptions[] = {{"--json", ""}};

}  // namespace

std::span<const OptionSpec> InfoOptionSpecs() { return kOptions; }

int RunInfo(const std::vector<std::string> &args) {
  CommandLine line("info", kOptions, args);
  if (!line.ok()) return kUsageError;
  const bool json = line.Flag("--json");
  std::string error;
  std::unique_ptr<ProviderHandle> aesmux = ProviderHandle::Configured(&error);
  if (aesmux == nullptr) {
    std::fprintf(stderr, "aesmux info: %s", error.c_str());
    return 1;
  }
  const Info info = Gather(*aesmux);
  if (json) {
    PrintJson(info);
  } else {
    PrintText(info);
  }
  return info.problems.empty() ? 0 : 1;
}

}  // namespace aesmux::cli
