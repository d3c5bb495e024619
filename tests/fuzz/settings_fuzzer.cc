// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// libFuzzer target: the parsers of what an operator writes, in-process
// (no module): the settings from openssl.cnf values and the environment
// (LoadSettings, CheckConfigKeys, CheckEnvironment), the calibration file
// (read from a file holding the input) and openssl.cnf itself (ParseCnf,
// FindAesmuxSection). The first byte of an input chooses which; the rest
// is text:
//   0  lines "name=value": a name starting "AESMUX_" is a variable, any
//      other a key of aesmux's section
//   1  a calibration file
//   2  an openssl.cnf file (an .include reads the same text again, at
//      most four times)
// Besides the sanitizers, it checks that every message is one line of
// printable ASCII (values are quoted as escaped excerpts) and that no
// setting is in force without a value.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provider/openssl/openssl_cnf.h"
#include "provider/route/settings.h"

namespace aesmux::fuzz {
namespace {

constexpr kernels::CpuFeatures kAllFeatures = ~kernels::CpuFeatures{0};

void Check(bool ok, const char *what, std::string_view detail) {
  if (ok) return;
  std::fprintf(stderr, "settings_fuzzer: %s: %.*s\n", what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

void CheckMessages(const route::Problems &problems) {
  for (const std::vector<std::string> *list :
       {&problems.errors, &problems.warnings}) {
    for (const std::string &problem : *list) {
      for (const char c : problem) {
        Check(c >= 0x20 && c < 0x7f, "a message byte that is not printable",
              problem);
      }
    }
  }
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    lines.push_back(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size()
                                                         : newline + 1);
  }
  return lines;
}

void Load(const std::map<std::string, std::string, std::less<>> &config,
          const std::map<std::string, std::string, std::less<>> &env) {
  auto lookup = [](const std::map<std::string, std::string, std::less<>> &m) {
    return [&m](std::string_view name) -> std::optional<std::string> {
      auto it = m.find(name);
      if (it == m.end() || it->second.empty()) return std::nullopt;
      return it->second;
    };
  };
  route::Problems problems;
  const std::optional<route::Settings> settings = route::LoadSettings(
      lookup(config), lookup(env), kAllFeatures, &problems);
  CheckMessages(problems);
  Check(settings.has_value() == problems.errors.empty(),
        "loaded with errors, or refused without", problems.Text());
  if (!settings) return;
  for (const route::SettingValue &value : settings->in_force) {
    Check(!value.key.empty() && !value.value.empty(), "a setting without value",
          value.key);
  }
}

// Input 0: settings from openssl.cnf and the environment.
void Settings(std::string_view text) {
  std::map<std::string, std::string, std::less<>> config, env;
  std::vector<std::string> keys, entries;
  for (const std::string_view line : Lines(text)) {
    const size_t equals = line.find('=');
    const std::string name(line.substr(0, equals));
    const std::string value(
        equals == std::string_view::npos ? "" : line.substr(equals + 1));
    if (name.starts_with("AESMUX_")) {
      env.emplace(name, value);
      entries.push_back(name + "=" + value);
    } else {
      config.emplace(name, value);
      keys.push_back(name);
    }
  }
  // No file names from the input: the calibration file has its own input.
  config.erase("calibration_file");
  env.erase("AESMUX_CALIBRATION_FILE");
  route::Problems problems;
  route::CheckConfigKeys(keys, "fuzz.cnf [aesmux]", &problems);
  std::vector<const char *> envp;
  for (const std::string &entry : entries) envp.push_back(entry.c_str());
  envp.push_back(nullptr);
  route::CheckEnvironment(envp.data(), &problems);
  CheckMessages(problems);
  Check(route::EnvironmentValuesIn(envp.data()).size() ==
            route::SettingNameTexts().size(),
        "a value per variable", "");
  Load(config, env);
}

// Input 1: a calibration file, through the file system as the provider
// reads it.
void Calibration(std::string_view text) {
  static const std::string path = [] {
    char name[] = "/tmp/aesmux-settings-fuzzer-XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    return std::string(name);
  }();
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  Check(fd >= 0, "cannot write the calibration file", path);
  const bool written =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  Check(written, "cannot write the calibration file", path);
  Load({{"calibration_file", path}}, {});
}

// Input 2: openssl.cnf; an include reads the input again, the first four
// times (ParseCnf's own bound, 1 MiB read in all, would make each input
// cost milliseconds).
std::string g_cnf;
int g_includes = 0;
bool ReadInput(const std::string &, std::string *text) {
  if (++g_includes > 4) return false;
  *text = g_cnf;
  return true;
}
bool NoDirectory(const std::string &, std::vector<std::string> *) {
  return false;
}

void Cnf(std::string_view text) {
  g_cnf = std::string(text);
  g_includes = 0;
  const openssl::CnfFile file =
      openssl::ParseCnf("fuzz.cnf", g_cnf, {ReadInput, NoDirectory});
  // The core holds what the file says, so the section is found if listed.
  std::map<std::string_view, std::string_view> held;
  for (const openssl::CnfEntry &entry : file.entries) {
    held[entry.key] = entry.value;
  }
  for (const std::string_view name : {"aesmux", "default"}) {
    const openssl::AesmuxSection section = openssl::FindAesmuxSection(
        file, name, [&](const std::vector<std::string_view> &keys) {
          std::vector<std::optional<std::string>> values;
          for (const std::string_view key : keys) {
            auto it = held.find(key);
            values.push_back(it == held.end()
                                 ? std::nullopt
                                 : std::optional(std::string(it->second)));
          }
          return values;
        });
    route::Problems problems;
    route::CheckConfigKeys(section.keys, section.where, &problems);
    CheckMessages(problems);
    Check(section.where.empty() == section.keys.empty(),
          "keys without a section", section.where);
  }
  (void)file.Diagnostics();
}

}  // namespace
}  // namespace aesmux::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char *>(data) + 1,
                              size - 1);
  switch (data[0] % 3) {
    case 0: aesmux::fuzz::Settings(text); break;
    case 1: aesmux::fuzz::Calibration(text); break;
    case 2: aesmux::fuzz::Cnf(text); break;
  }
  return 0;
}
