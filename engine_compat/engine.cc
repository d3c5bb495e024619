// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The dynamic ENGINE `aesmux`: its id, ciphers, control commands and the
// instance (settings, router, fallback library) its ciphers run in, made
// when the ENGINE is initialised exactly as the provider makes one.
//
// Control commands: every setting of the provider, named as its
// environment variable without AESMUX_ (KERNELS, CBC_FALLBACK_MAX_LEN,
// GCM_AFALG, STATS_FILE, ...; SettingNames() lists them), taking the same
// values, given before the ENGINE is initialised (`openssl engine -pre`,
// lines of openssl.cnf's engine section before `init` or
// `default_algorithms`); an AESMUX_* variable still overrides them, as it
// overrides openssl.cnf for the provider. DUMP_STATS (no input) prints the
// statistics of this process on stdout, as the table `aesmux stats` prints.
// The ENGINE answers OpenSSL's questions about its commands itself
// (ENGINE_FLAGS_MANUAL_CMD_CTRL), to name the nearest command to a name
// that is none.
#include <openssl/crypto.h>
#include <openssl/engine.h>
#include <openssl/err.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine_compat/legacy_cipher.h"
#include "kernels/tiers.h"
#include "provider/openssl/provider_context.h"
#include "provider/route/excerpt.h"
#include "provider/route/settings.h"
#include "provider/core/process.h"

namespace aesmux::engine {
namespace {

constexpr const char *kEngineId = "aesmux";
constexpr const char *kEngineName =
    "aesmux AES (ECB, CBC, CTR, XTS, GCM) on the aesmux provider's paths";

// The control commands: one per setting, then DUMP_STATS.
struct Commands {
  std::vector<route::SettingName> settings;
  std::vector<std::string> names;
  std::vector<std::string> descriptions;
  std::vector<ENGINE_CMD_DEFN> defns;  // ends with an all-zero entry
  unsigned int dump_stats = 0;
};

// Made once and never freed (as TheState below); a ProcessValue, not a
// function-local static, whose guard a fork could leave held.
core::ProcessValue<const Commands *> g_commands;

const Commands &TheCommands() {
  return *g_commands.Get([] {
    auto *c = new Commands;
    c->settings = route::SettingNames();
    for (const route::SettingName &setting : c->settings) {
      c->names.push_back(setting.env_name.substr(std::strlen("AESMUX_")));
      c->descriptions.push_back("aesmux setting " + setting.key +
                                " (see openssl.cnf.example)");
    }
    c->names.push_back("DUMP_STATS");
    c->descriptions.push_back(
        "print the statistics (requests and bytes per algorithm and path)");
    for (size_t i = 0; i < c->names.size(); ++i) {
      const bool setting = i < c->settings.size();
      c->defns.push_back({static_cast<unsigned int>(ENGINE_CMD_BASE + i),
                          c->names[i].c_str(), c->descriptions[i].c_str(),
                          setting ? ENGINE_CMD_FLAG_STRING
                                  : ENGINE_CMD_FLAG_NO_INPUT});
    }
    c->dump_stats =
        static_cast<unsigned int>(ENGINE_CMD_BASE + c->settings.size());
    c->defns.push_back({0, nullptr, nullptr, 0});
    return static_cast<const Commands *>(c);
  });
}

// The module's state, shared by every ENGINE bound from it. Never freed:
// OpenSSL calls the ENGINE's finish and destroy from its own atexit
// handler, after this module's static destructors would have run.
struct State {
  std::mutex mutex;
  std::map<std::string, std::string, std::less<>> config;  // setting key
  openssl::ProviderContext *context = nullptr;
  int initialised = 0;  // ENGINEs of this module with a functional reference
  // Made at the first bind, kept for the process: contexts may outlive
  // the ENGINE (legacy_cipher.h).
  std::unique_ptr<LegacyCiphers> ciphers;
};

core::ProcessValue<State *> g_state;

State &TheState() {
  return *g_state.Get([] { return new State; });
}

route::ConfigLookup ConfigOf(const std::map<std::string, std::string,
                                            std::less<>> &config) {
  return [&config](std::string_view key) -> std::optional<std::string> {
    auto it = config.find(key);
    if (it == config.end()) return std::nullopt;
    return it->second;
  };
}

void ReportError(int reason, const std::string &message) {
  ERR_raise_data(ERR_LIB_ENGINE, reason, "aesmux: %s", message.c_str());
}

int Init(ENGINE *) noexcept {
  State &state = TheState();
  std::lock_guard lock(state.mutex);
  if (state.initialised > 0) {
    ++state.initialised;
    return 1;
  }
  route::Problems problems;
  int reason = 0;
  try {
    state.context = openssl::NewProviderContext(
        nullptr, route::ConfigValuesOf(ConfigOf(state.config)), &problems,
        &reason);
  } catch (const std::bad_alloc &) {  // the settings' values
    ERR_raise(ERR_LIB_ENGINE, ERR_R_MALLOC_FAILURE);
    return 0;
  }
  // As the provider does: a silently missing ENGINE is the worst outcome.
  openssl::PrintProblems("aesmux: ENGINE not initialised: ", problems);
  if (state.context == nullptr) {
    for (const std::string &error : problems.errors) {
      ReportError(ENGINE_R_INIT_FAILED, error);
    }
    if (problems.errors.empty()) ERR_raise(ERR_LIB_ENGINE, reason);
    return 0;
  }
  SetProviderContext(state.context);
  state.initialised = 1;
  return 1;
}

int Finish(ENGINE *) noexcept {
  State &state = TheState();
  std::lock_guard lock(state.mutex);
  if (state.initialised > 0 && --state.initialised == 0) {
    // Contexts that started in the instance keep it until they are freed.
    SetProviderContext(nullptr);
    openssl::FreeProviderContext(state.context);
    state.context = nullptr;
  }
  return 1;
}

// Whether aesmux is off (`disable = 1`), by the settings given so far and
// the environment when the ENGINE is not initialised yet.
bool Off(State &state) {
  std::lock_guard lock(state.mutex);
  if (state.context != nullptr) {
    return !state.context->router.settings().off.empty();
  }
  route::Problems problems;
  const std::optional<route::Settings> settings =
      route::LoadSettings(ConfigOf(state.config), openssl::EnvValue,
                          kernels::DetectCpuFeatures(), &problems);
  return settings && !settings->off.empty();
}

// When aesmux is off it lists no cipher, so that OpenSSL registers none of
// them for it (ENGINE_set_default asks before the ENGINE is initialised)
// and programs use OpenSSL's own.
int Ciphers(ENGINE *, const EVP_CIPHER **cipher, const int **nids,
            int nid) noexcept {
  if (cipher == nullptr) {
    try {
      if (Off(TheState())) {
        *nids = nullptr;
        return 0;
      }
    } catch (const std::bad_alloc &) {
      ERR_raise(ERR_LIB_ENGINE, ERR_R_MALLOC_FAILURE);
      return 0;
    }
    *nids = LegacyCiphers::Nids().data();
    return static_cast<int>(LegacyCiphers::Nids().size());
  }
  State &state = TheState();
  *cipher = state.ciphers != nullptr ? state.ciphers->ByNid(nid) : nullptr;
  return *cipher != nullptr ? 1 : 0;
}

// A setting: checked at once (with the others given so far and the
// environment), used when the ENGINE is initialised.
int SetSetting(const route::SettingName &setting, const char *value) {
  State &state = TheState();
  std::lock_guard lock(state.mutex);
  if (value == nullptr) {
    ReportError(ENGINE_R_INVALID_ARGUMENT, setting.key + ": no value");
    return 0;
  }
  if (state.context != nullptr) {
    ReportError(ENGINE_R_ALREADY_LOADED,
                "settings are read when the ENGINE is initialised: " +
                    setting.env_name.substr(std::strlen("AESMUX_")) +
                    " comes too late (give it with -pre, or before init / "
                    "default_algorithms in openssl.cnf)");
    return 0;
  }
  auto config = state.config;
  config[setting.key] = value;
  route::Problems problems;
  if (!route::LoadSettings(ConfigOf(config), openssl::EnvValue,
                           kernels::DetectCpuFeatures(), &problems)) {
    for (const std::string &error : problems.errors) {
      ReportError(ENGINE_R_INVALID_ARGUMENT, error);
    }
    return 0;
  }
  state.config = std::move(config);
  return 1;
}

int DumpStats() {
  State &state = TheState();
  std::string table;
  {
    std::lock_guard lock(state.mutex);
    table = openssl::StatsTable(state.context);
  }
  const bool ok = std::printf("aesmux ENGINE, this process (pid %ld)\n%s",
                              static_cast<long>(getpid()), table.c_str()) >= 0;
  return std::fflush(stdout) == 0 && ok ? 1 : 0;
}

// A name that is no command of the ENGINE: on the error queue with the
// nearest command, and on stderr (once per process) when it is near enough
// to be a misspelling of one. OpenSSL asks for commands of every ENGINE
// that the ENGINE may not have (apps ask for SET_USER_INTERFACE): those
// are not printed.
void UnknownCommand(const Commands &commands, std::string_view name) {
  constexpr size_t kMisspelling = 2;  // edits
  std::string_view nearest;
  size_t distance = ~size_t{0};
  if (name.size() <= 64) {
    for (const std::string &command : commands.names) {
      if (const size_t d = route::EditDistance(name, command); d < distance) {
        distance = d;
        nearest = command;
      }
    }
  }
  std::string problem =
      "ENGINE: " + route::Excerpt(name) + " is not a control command of aesmux";
  if (!nearest.empty()) {
    problem.append(" (did you mean '").append(nearest).append("'?)");
  }
  ERR_raise_data(ERR_LIB_ENGINE, ENGINE_R_INVALID_CMD_NAME, "aesmux: %s",
                 problem.c_str());
  if (distance <= kMisspelling) {
    route::Problems problems;
    problems.warnings.push_back(problem);
    openssl::PrintProblems("", problems);
  }
}

// The commands' discovery (ENGINE_FLAGS_MANUAL_CMD_CTRL), answered as
// OpenSSL's own helper (crypto/engine/eng_ctrl.c) answers it from the
// command table, so that a name that is no command is answered by
// UnknownCommand: OpenSSL's helper says only "invalid cmd name", and in
// openssl.cnf without config_diagnostics nothing at all (it drops the
// rest of the ENGINE's section). Returns nullopt for another command.
std::optional<int> Discovery(const Commands &commands, int cmd, long number,
                             void *p) {
  const std::vector<ENGINE_CMD_DEFN> &defns = commands.defns;
  const size_t count = defns.size() - 1;  // the last is all zero
  switch (cmd) {
    case ENGINE_CTRL_GET_FIRST_CMD_TYPE:
      return static_cast<int>(defns[0].cmd_num);
    case ENGINE_CTRL_GET_CMD_FROM_NAME:
      if (p == nullptr) break;
      for (size_t k = 0; k < count; ++k) {
        if (std::strcmp(defns[k].cmd_name, static_cast<char *>(p)) == 0) {
          return static_cast<int>(defns[k].cmd_num);
        }
      }
      UnknownCommand(commands, static_cast<char *>(p));
      return -1;
    case ENGINE_CTRL_GET_NEXT_CMD_TYPE:
    case ENGINE_CTRL_GET_NAME_LEN_FROM_CMD:
    case ENGINE_CTRL_GET_NAME_FROM_CMD:
    case ENGINE_CTRL_GET_DESC_LEN_FROM_CMD:
    case ENGINE_CTRL_GET_DESC_FROM_CMD:
    case ENGINE_CTRL_GET_CMD_FLAGS: {
      size_t k = 0;
      while (k < count && defns[k].cmd_num != static_cast<unsigned>(number)) {
        ++k;
      }
      if (k == count) {
        ERR_raise(ERR_LIB_ENGINE, ENGINE_R_INVALID_CMD_NUMBER);
        return -1;
      }
      const ENGINE_CMD_DEFN &defn = defns[k];
      if (cmd == ENGINE_CTRL_GET_NEXT_CMD_TYPE) {
        return static_cast<int>(defns[k + 1].cmd_num);  // 0 after the last
      }
      if (cmd == ENGINE_CTRL_GET_CMD_FLAGS) {
        return static_cast<int>(defn.cmd_flags);
      }
      const bool name = cmd == ENGINE_CTRL_GET_NAME_LEN_FROM_CMD ||
                        cmd == ENGINE_CTRL_GET_NAME_FROM_CMD;
      const char *text = name ? defn.cmd_name : defn.cmd_desc;
      const int length = static_cast<int>(std::strlen(text));
      if (cmd == ENGINE_CTRL_GET_NAME_LEN_FROM_CMD ||
          cmd == ENGINE_CTRL_GET_DESC_LEN_FROM_CMD) {
        return length;
      }
      if (p == nullptr) break;
      // OpenSSL's callers size the buffer by the length asked before.
      std::memcpy(p, text, static_cast<size_t>(length) + 1);
      return length;
    }
    default:
      return std::nullopt;
  }
  ERR_raise(ERR_LIB_ENGINE, ERR_R_PASSED_NULL_PARAMETER);
  return -1;
}

int Ctrl(ENGINE *, int cmd, long number, void *p, void (*)(void)) noexcept {
  try {
    const Commands &commands = TheCommands();
    if (const std::optional<int> answer =
            Discovery(commands, cmd, number, p)) {
      return *answer;
    }
    const auto index = static_cast<size_t>(cmd - ENGINE_CMD_BASE);
    if (cmd >= ENGINE_CMD_BASE && index < commands.settings.size()) {
      return SetSetting(commands.settings[index],
                        static_cast<const char *>(p));
    }
    if (static_cast<unsigned int>(cmd) == commands.dump_stats) {
      return DumpStats();
    }
    ERR_raise(ERR_LIB_ENGINE, ENGINE_R_CTRL_COMMAND_NOT_IMPLEMENTED);
  } catch (const std::bad_alloc &) {
    ERR_raise(ERR_LIB_ENGINE, ERR_R_MALLOC_FAILURE);
  }
  return 0;
}

int Bind(ENGINE *e, const char *id) noexcept {
  if (id != nullptr && std::strcmp(id, kEngineId) != 0) return 0;
  try {
    State &state = TheState();
    std::lock_guard lock(state.mutex);
    if (state.ciphers == nullptr) {
      state.ciphers = LegacyCiphers::Create();
      if (state.ciphers == nullptr) return 0;
    }
    if (!ENGINE_set_id(e, kEngineId) || !ENGINE_set_name(e, kEngineName) ||
        !ENGINE_set_ciphers(e, Ciphers) ||
        !ENGINE_set_init_function(e, Init) ||
        !ENGINE_set_finish_function(e, Finish) ||
        !ENGINE_set_ctrl_function(e, Ctrl) ||
        !ENGINE_set_flags(e, ENGINE_get_flags(e) |
                                 ENGINE_FLAGS_MANUAL_CMD_CTRL) ||
        !ENGINE_set_cmd_defns(e, TheCommands().defns.data())) {
      return 0;
    }
    return 1;
  } catch (const std::exception &) {
    ERR_raise(ERR_LIB_ENGINE, ERR_R_INTERNAL_ERROR);
    return 0;
  }
}

}  // namespace
}  // namespace aesmux::engine

// The two symbols OpenSSL's dynamic ENGINE loader looks for.
extern "C" {
#pragma GCC visibility push(default)
static int aesmux_bind(ENGINE *e, const char *id) {
  return aesmux::engine::Bind(e, id);
}
IMPLEMENT_DYNAMIC_CHECK_FN()
IMPLEMENT_DYNAMIC_BIND_FN(aesmux_bind)
#pragma GCC visibility pop
}
