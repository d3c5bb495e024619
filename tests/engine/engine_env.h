// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support for the ENGINE aesmux: loading the module built in this tree
// through OpenSSL's dynamic ENGINE loader, configuring it with its control
// commands, and reading its statistics (DUMP_STATS).
//
// The ENGINE's state is per process: one configuration at a time, read when
// the ENGINE is initialised, so a test sets its configuration with
// EngineConfig, which initialises the ENGINE and finishes it again at the
// end of the test.
#ifndef AESMUX_TESTS_ENGINE_ENGINE_ENV_H_
#define AESMUX_TESTS_ENGINE_ENGINE_ENV_H_

#include <gtest/gtest.h>
#include <openssl/engine.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/provider/kernel_configs.h"

namespace aesmux::test {

// Path of the ENGINE module under test (set by CMake).
std::string EngineModulePath();

// ENGINE_by_id("aesmux") after loading the module once (dynamic ENGINE,
// LIST_ADD), as `-engine aesmux` finds an installed one. A structural
// reference the caller frees; null with the error in `error`.
ENGINE *AesmuxEngine(std::string *error);

struct EngineFree {
  void operator()(ENGINE *e) const { ENGINE_free(e); }
};
using EnginePtr = std::unique_ptr<ENGINE, EngineFree>;

// Control commands for a kernel configuration: KERNELS and every family's
// FALLBACK_MAX_LEN (0 when the configuration does not route).
std::vector<std::pair<std::string, std::string>> EngineCommands(
    const KernelConfig &config);

// The ENGINE initialised with `commands` for the life of this object (the
// AESMUX_* environment is cleared first, so that the configuration tested
// is the one named); finished again on destruction.
class EngineConfig {
 public:
  EngineConfig(ENGINE *e,
               const std::vector<std::pair<std::string, std::string>> &commands);
  ~EngineConfig();
  EngineConfig(const EngineConfig &) = delete;
  EngineConfig &operator=(const EngineConfig &) = delete;

  bool ok() const { return initialised_; }
  const std::string &error() const { return error_; }

 private:
  ENGINE *e_;
  bool initialised_ = false;
  std::string error_;
};

// The ENGINE's statistics (DUMP_STATS), by "<algorithm> <path>".
struct EngineCounter {
  uint64_t requests = 0;
  uint64_t bytes = 0;
};
using EngineStats = std::map<std::string, EngineCounter, std::less<>>;
EngineStats ReadEngineStats(ENGINE *e);

// Requests of `algorithm` the ENGINE served on any path between two reads.
uint64_t EngineRequests(const EngineStats &before, const EngineStats &after,
                        std::string_view algorithm);

// Skips a test whose kernel configuration this CPU cannot run; else
// initialises the ENGINE under it for the test.
template <typename Param>
class EngineFixture : public testing::TestWithParam<Param> {
 protected:
  virtual const KernelConfig &config() const = 0;

  void SetUp() override {
    if (const std::string reason = UnsupportedReason(config());
        !reason.empty()) {
      GTEST_SKIP() << reason;
    }
    std::string error;
    engine_.reset(AesmuxEngine(&error));
    ASSERT_NE(engine_, nullptr) << error;
    config_ = std::make_unique<EngineConfig>(engine_.get(),
                                             EngineCommands(config()));
    ASSERT_TRUE(config_->ok()) << config_->error();
  }
  void TearDown() override { config_.reset(); }

  EnginePtr engine_;
  std::unique_ptr<EngineConfig> config_;
};

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_ENGINE_ENGINE_ENV_H_
