// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/openssl/provider_context.h"

#include <openssl/err.h>
#include <openssl/proverr.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "kernels/tiers.h"
#include "provider/batch/cbc_batch.h"
#include "provider/core/diagnostics.h"
#include "provider/core/process.h"
#include "provider/core/stats.h"
#include "provider/core/stats_table.h"

namespace aesmux::openssl {
namespace {

using core::Family;

// Statistics are process-wide; the file is written when the last instance
// of the process goes away (normally at OPENSSL_cleanup, at exit), or when
// the module is unloaded with instances still alive (a library context the
// application never freed). Trivially destructible, so the module
// destructor below may use it whatever the order of destruction. Guarded
// by core::InitLock, not a mutex of its own, which a child forked while
// another thread loads or unloads an instance would inherit held and wait
// for at its own unload or exit: fork() waits for that lock. The file is
// written outside it (its writer's lock is held across fork: core/stats.cc).
struct Instances {
  int count = 0;
  // Whether an instance has set the file's prefix. Until one has, nothing
  // reads the notes, so instances do not make them (work at load and at
  // teardown that nobody would read: BENCHMARKS.md, "What does loading aesmux
  // cost: start-up and memory?"); the one that sets the prefix makes them at
  // once.
  bool stats_file = false;
};
constinit Instances g_instances;

// "afalg <family>: <state>" of an instance, per family, as far as it has
// settled the afalg path: asking would probe it, at load or at exit, which
// a process that never needed it should not pay for.
std::vector<core::StatsTableNote> AfalgNotes(const route::Router &router) {
  std::vector<core::StatsTableNote> notes;
  for (size_t f = 0; f < core::kNumFamilies; ++f) {
    notes.push_back({"afalg " + std::string(core::kFamilyNames[f]) + ": " +
                         router.afalg_state_so_far(static_cast<Family>(f)),
                     1});
  }
  return notes;
}

// The same, as the statistics file's notes.
void SetNotes(const route::Router &router) {
  std::string notes;
  for (const core::StatsTableNote &note : AfalgNotes(router)) {
    notes += note.text + "\n";
  }
  core::SetStatsFileNotes(notes);
}

void RegisterInstance(const route::Router &router) {
  const route::Settings &settings = router.settings();
  // Off (`disable = 1`), aesmux serves nothing and writes nothing.
  const bool sets_prefix = !settings.stats_file.empty() && settings.off.empty();
  bool notes = false;
  {
    core::InitLock lock;
    ++g_instances.count;
    if (sets_prefix) g_instances.stats_file = true;
    notes = g_instances.stats_file;
  }
  if (sets_prefix) core::SetStatsFilePrefix(settings.stats_file);
  if (notes) SetNotes(router);
}

bool StatsFileSet() {
  core::InitLock lock;
  return g_instances.stats_file;
}

void UnregisterInstance() {
  bool last = false;
  {
    // The combiner goes before an instance made meanwhile can use it.
    core::InitLock lock;
    last = --g_instances.count == 0;
    if (last) batch::ReleaseIdleCombiner();
  }
  if (last) core::WriteStatsFile();
}

__attribute__((destructor)) void WriteStatsOfLiveInstances() {
  bool live = false;
  {
    core::InitLock lock;
    live = g_instances.count > 0;
  }
  if (live) core::WriteStatsFile();
}

// The AESMUX_* environment in one pass over it, rather than a getenv() per
// key, and its names aesmux does not read; nothing in a setuid program, as
// EnvValue.
route::SourceValues EnvironmentValues(route::Problems *problems) {
  if (getauxval(AT_SECURE) != 0) {
    return route::SourceValues(route::SettingNameTexts().size());
  }
  route::CheckEnvironment(environ, problems);
  return route::EnvironmentValuesIn(environ);
}

ProviderContext *MakeContext(const OSSL_CORE_HANDLE *handle,
                             const route::SourceValues &config,
                             route::Problems *problems, int *reason) {
  std::optional<route::Settings> settings =
      route::LoadSettings(config, EnvironmentValues(problems),
                          kernels::DetectCpuFeatures(), problems);
  if (!settings) {
    *reason = PROV_R_INVALID_CONFIG_DATA;
    return nullptr;
  }
  // Made on the first request that needs it (fallback.h).
  auto fallback = std::make_unique<fallback::FallbackLibrary>();
  batch::Prepare();
  auto context = std::make_unique<ProviderContext>(
      handle, std::move(fallback), std::move(*settings), problems->warnings);
  RegisterInstance(context->router);
  return context.release();
}

// Hashes of the lines PrintProblems has printed in this process; beyond
// the first kSize, a line is printed again rather than never.
// Under core::InitLock, which fork() waits for (a mutex of its own, held
// by another thread at a fork, would hang a child that loads aesmux).
struct Printed {
  static constexpr size_t kSize = 64;
  std::array<size_t, kSize> hashes{};
  size_t count = 0;

  // Whether `line` is new (and now remembered).
  bool First(std::string_view line) {
    const size_t hash = std::hash<std::string_view>()(line);
    core::InitLock lock;
    const auto end = hashes.begin() + static_cast<std::ptrdiff_t>(count);
    if (std::find(hashes.begin(), end, hash) != end) return false;
    if (count < kSize) hashes[count++] = hash;
    return true;
  }
};
constinit Printed g_printed;

}  // namespace

std::optional<std::string> EnvValue(std::string_view name) {
  const char *value = secure_getenv(std::string(name).c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

ProviderContext *NewProviderContext(const OSSL_CORE_HANDLE *handle,
                                    const route::SourceValues &config,
                                    route::Problems *problems, int *reason) {
  // What stderr is now is where messages may go, if this is the first
  // instance of this load of the module (core/diagnostics.h).
  core::PinStderr();
  try {
    return MakeContext(handle, config, problems, reason);
  } catch (const std::bad_alloc &) {
    *reason = ERR_R_MALLOC_FAILURE;  // the reason says it all
  } catch (const std::exception &e) {
    *reason = ERR_R_INTERNAL_ERROR;
    try {
      problems->errors.emplace_back(e.what());
    } catch (const std::bad_alloc &) {
    }
  }
  return nullptr;
}

void HoldProviderContext(ProviderContext *context) {
  context->holds.fetch_add(1, std::memory_order_relaxed);
}

void PrintProblems(std::string_view error_prefix,
                   const route::Problems &problems) noexcept {
  auto print = [](std::string_view prefix, const std::string &problem) {
    std::string line;
    line.append(prefix).append(problem).append("\n");
    if (g_printed.First(line)) core::PrintDiagnostic(line);
  };
  try {
    for (const std::string &error : problems.errors) print(error_prefix, error);
    for (const std::string &warning : problems.warnings) {
      print("aesmux: warning: ", warning);
    }
  } catch (const std::bad_alloc &) {
    core::PrintDiagnostic(
        "aesmux: out of memory printing its configuration's problems\n");
  }
}

void FreeProviderContext(ProviderContext *context) {
  if (context->holds.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The notes again, with what the instance settled since it was made
  // (if memory has run out, the notes made before stay).
  try {
    if (StatsFileSet()) SetNotes(context->router);
  } catch (const std::bad_alloc &) {
  }
  delete context;
  UnregisterInstance();
}

std::string StatsTable(const ProviderContext *context) {
  return core::FormatStatsTable(
      core::ReadStats(),
      context != nullptr ? AfalgNotes(context->router)
                         : std::vector<core::StatsTableNote>{},
      false);
}

}  // namespace aesmux::openssl
