// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/engine/engine_env.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "tests/support/provider_env.h"

namespace aesmux::test {

std::string EngineModulePath() {
  if (const char *path = std::getenv("AESMUX_TEST_ENGINE")) return path;
  return AESMUX_TEST_ENGINE_PATH;
}

ENGINE *AesmuxEngine(std::string *error) {
  static const bool loaded = [] {
    ENGINE *dynamic = ENGINE_by_id("dynamic");
    const bool ok =
        dynamic != nullptr &&
        ENGINE_ctrl_cmd_string(dynamic, "SO_PATH", EngineModulePath().c_str(),
                               0) &&
        ENGINE_ctrl_cmd_string(dynamic, "ID", "aesmux", 0) &&
        ENGINE_ctrl_cmd_string(dynamic, "LIST_ADD", "1", 0) &&
        ENGINE_ctrl_cmd_string(dynamic, "LOAD", nullptr, 0);
    ENGINE_free(dynamic);
    return ok;
  }();
  ENGINE *e = loaded ? ENGINE_by_id("aesmux") : nullptr;
  if (e == nullptr) {
    *error = "could not load " + EngineModulePath() + ": " + TakeErrors();
  }
  return e;
}

std::vector<std::pair<std::string, std::string>> EngineCommands(
    const KernelConfig &config) {
  std::vector<std::pair<std::string, std::string>> commands = {
      {"KERNELS", config.kernels}};
  for (const char *family : {"ECB", "CBC", "CTR", "XTS", "GCM"}) {
    commands.emplace_back(std::string(family) + "_FALLBACK_MAX_LEN",
                          std::to_string(config.fallback_max_len));
  }
  return commands;
}

EngineConfig::EngineConfig(
    ENGINE *e, const std::vector<std::pair<std::string, std::string>> &commands)
    : e_(e) {
  // Each setting's command is its environment variable without AESMUX_.
  for (int cmd = ENGINE_ctrl(e, ENGINE_CTRL_GET_FIRST_CMD_TYPE, 0, nullptr,
                             nullptr);
       cmd > 0;
       cmd = ENGINE_ctrl(e, ENGINE_CTRL_GET_NEXT_CMD_TYPE, cmd, nullptr,
                         nullptr)) {
    char name[128] = {};
    if (ENGINE_ctrl(e, ENGINE_CTRL_GET_NAME_LEN_FROM_CMD, cmd, nullptr,
                    nullptr) < static_cast<int>(sizeof(name)) &&
        ENGINE_ctrl(e, ENGINE_CTRL_GET_NAME_FROM_CMD, cmd, name, nullptr) > 0) {
      unsetenv((std::string("AESMUX_") + name).c_str());
    }
  }
  for (const auto &[name, value] : commands) {
    if (!ENGINE_ctrl_cmd_string(e, name.c_str(), value.c_str(), 0)) {
      error_ = name + " = " + value + " refused: " + TakeErrors();
      return;
    }
  }
  initialised_ = ENGINE_init(e) == 1;
  if (!initialised_) error_ = "ENGINE_init failed: " + TakeErrors();
}

EngineConfig::~EngineConfig() {
  if (initialised_) ENGINE_finish(e_);
}

EngineStats ReadEngineStats(ENGINE *e) {
  testing::internal::CaptureStdout();
  const int ok = ENGINE_ctrl_cmd_string(e, "DUMP_STATS", nullptr, 0);
  const std::string text = testing::internal::GetCapturedStdout();
  EngineStats stats;
  if (!ok) {
    ADD_FAILURE() << "DUMP_STATS failed: " << TakeErrors();
    return stats;
  }
  // The table of `aesmux stats`: "<algorithm> <path> <requests> <bytes>
  // <share>" rows for the paths that served requests, then, under "afalg
  // hand-offs", "<algorithm> <reason> <requests> <bytes>" rows.
  std::istringstream lines(text);
  std::string line;
  std::string prefix;  // before a hand-off's reason
  while (std::getline(lines, line)) {
    if (line.starts_with("afalg hand-offs")) prefix = "afalg-fallback:";
    std::istringstream fields(line);
    std::string algorithm, path;
    EngineCounter counter;
    if (line.starts_with("AES-") &&
        fields >> algorithm >> path >> counter.requests >> counter.bytes) {
      stats[algorithm + " " + prefix + path] = counter;
    }
  }
  return stats;
}

uint64_t EngineRequests(const EngineStats &before, const EngineStats &after,
                        std::string_view algorithm) {
  uint64_t served = 0;
  for (const auto &[key, counter] : after) {
    // Hand-offs ("afalg-fallback:<reason>") are served on another path too.
    if (!key.starts_with(std::string(algorithm) + " ") ||
        key.find("afalg-fallback") != std::string::npos) {
      continue;
    }
    auto it = before.find(key);
    served += counter.requests - (it != before.end() ? it->second.requests : 0);
  }
  return served;
}

}  // namespace aesmux::test
