// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The provider's entry point: configuration, the algorithm table, provider
// parameters (including the routing statistics) and teardown.
#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/proverr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "provider/openssl/generic_ctx.h"
#include "provider/openssl/openssl_cnf.h"
#include "provider/openssl/params.h"
#include "provider/openssl/provider_context.h"
#include "provider/openssl/skey.h"
#include "provider/core/algorithm.h"
#include "provider/core/diagnostics.h"
#include "provider/core/process.h"
#include "provider/route/settings.h"
#include "provider/core/stats.h"

#ifndef AESMUX_VERSION
#define AESMUX_VERSION "0.0.0"
#endif

namespace aesmux::openssl {
namespace {

using core::Alg;
using core::Family;

constexpr const char *kProperties = "provider=aesmux";

// An algorithm's names as OpenSSL's algorithm tables write them,
// "NAME:ALIAS...:OID" (core::kAlgs: the default provider's names, aliases
// and OID, so that legacy NIDs, EVP_aes_*() and libssl's fetches all find
// aesmux), and its terminating NUL.
constexpr size_t NamesSize(const core::AlgInfo &info) {
  size_t size = info.name.size() + 1;
  for (std::string_view more : {info.aliases, info.oid}) {
    if (!more.empty()) size += more.size() + 1;
  }
  return size;
}

template <size_t kIndex>
constexpr auto MakeNames() {
  constexpr const core::AlgInfo &info = core::kAlgs[kIndex];
  std::array<char, NamesSize(info)> names{};
  size_t at = 0;
  for (std::string_view part : {info.name, info.aliases, info.oid}) {
    if (part.empty()) continue;
    if (at != 0) names[at++] = ':';
    for (char c : part) names[at++] = c;
  }
  return names;
}

template <size_t kIndex>
inline constexpr auto kNames = MakeNames<kIndex>();

// Every algorithm's names, in core::Alg order.
constexpr auto kAlgorithmNames = []<size_t... kIndex>(
                                     std::index_sequence<kIndex...>) {
  return std::array<const char *, core::kNumAlgs>{kNames<kIndex>.data()...};
}(std::make_index_sequence<core::kNumAlgs>());

using AlgorithmTable = std::array<OSSL_ALGORITHM, core::kNumAlgs + 1>;
core::ProcessValue<AlgorithmTable> g_algorithms;

const OSSL_ALGORITHM *Algorithms() {
  return g_algorithms
      .Get([] {
        AlgorithmTable algorithms = {};
        for (const core::AlgInfo &info : core::kAlgs) {
          const auto i = static_cast<size_t>(info.alg);
          algorithms[i] = {kAlgorithmNames[i], kProperties,
                           CipherDispatch(info.alg), "aesmux AES"};
        }
        return algorithms;
      })
      .data();
}

void Teardown(void *provctx) noexcept {
  FreeProviderContext(static_cast<ProviderContext *>(provctx));
}

// Text into a parameter the caller asked for as a pointer or as a string.
// `text` must outlive the call's result when it is a pointer.
bool SetText(OSSL_PARAM *p, const char *text) {
  return p->data_type == OSSL_PARAM_UTF8_PTR
             ? OSSL_PARAM_set_utf8_ptr(p, text)
             : OSSL_PARAM_set_utf8_string(p, text);
}

// What the provider knows about the machine and its settings, for
// `aesmux info`: computed once per process (the CPU does not change).
core::ProcessValue<std::string> g_cpu_features_text, g_tiers_text,
    g_paths_text;

const std::string &CpuFeaturesText() {
  return g_cpu_features_text.Get([] {
    return kernels::DescribeCpuFeatures(kernels::DetectCpuFeatures());
  });
}

// One line per tier built in: "<name>\tusable" or "<name>\tlacks <features>".
const std::string &TiersText() {
  return g_tiers_text.Get([] {
    const kernels::CpuFeatures cpu = kernels::DetectCpuFeatures();
    std::string lines;
    for (const kernels::Tier &tier : kernels::kTiers) {
      lines += std::string(tier.name) + "\t" +
               (kernels::Supported(tier, cpu)
                    ? std::string("usable")
                    : "lacks " + kernels::DescribeCpuFeatures(
                                     tier.required & ~cpu)) +
               "\n";
    }
    return lines;
  });
}

// "paths": the paths this build has, and why any is missing.
const std::string &PathsText() {
  return g_paths_text.Get([] {
    return kernels::kTiers.empty()
               ? "afalg fallback (no simd or mb: " + kernels::WhyNoTiers() + ")"
               : std::string("simd mb afalg fallback");
  });
}

// "mb-tier": the multi-buffer kernels in use and their widths.
std::string MbTierText(const route::Settings &settings) {
  if (settings.tier == nullptr || settings.tier->mb.lanes == 0) return "none";
  std::string text = std::string(settings.tier->name) + " (";
  for (const kernels::MbKernel &kernel : settings.tier->mb.kernels) {
    if (text.back() != '(') text += ", ";
    text += std::to_string(kernel.lanes);
  }
  return text + " lanes)";
}

// "settings": one line per key, "<key>\t<value>\t<origin>\t<source>".
std::string SettingsText(const route::Settings &settings) {
  std::string text;
  for (const route::SettingValue &value : settings.in_force) {
    text += value.key + "\t" + value.value + "\t" +
            std::string(route::OriginName(value.origin)) + "\t" +
            value.source + "\n";
  }
  return text;
}

// "setting.<key>", "setting.<key>.origin" and "setting.<key>.source".
bool SetSettingParam(OSSL_PARAM *p, const route::Settings &settings) {
  const std::string_view key = std::string_view(p->key).substr(8);
  for (const route::SettingValue &value : settings.in_force) {
    if (!key.starts_with(value.key)) continue;
    const std::string_view rest = key.substr(value.key.size());
    if (rest.empty()) return SetText(p, value.value.c_str());
    if (rest == ".origin") {
      return SetText(p, route::OriginName(value.origin).data());
    }
    if (rest == ".source") return SetText(p, value.source.c_str());
  }
  return true;  // unknown keys are left alone
}

const OSSL_PARAM *GettableParams(void *) noexcept {
  static const OSSL_PARAM kGettable[] = {
      OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, nullptr, 0),
      OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, nullptr,
                      0),
      OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, nullptr,
                      0),
      OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, nullptr, 0),
      OSSL_PARAM_DEFN("tier", OSSL_PARAM_UTF8_PTR, nullptr, 0),
      OSSL_PARAM_DEFN("tier-reason", OSSL_PARAM_UTF8_PTR, nullptr, 0),
      OSSL_PARAM_DEFN("stats", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_DEFN("afalg.ecb", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_DEFN("afalg.cbc", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_DEFN("afalg.ctr", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_DEFN("afalg.xts", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_DEFN("afalg.gcm", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_DEFN("architecture", OSSL_PARAM_UTF8_PTR, nullptr, 0),
      OSSL_PARAM_DEFN("paths", OSSL_PARAM_UTF8_PTR, nullptr, 0),
      OSSL_PARAM_DEFN("cpu-features", OSSL_PARAM_UTF8_PTR, nullptr, 0),
      OSSL_PARAM_DEFN("tiers", OSSL_PARAM_UTF8_PTR, nullptr, 0),
      OSSL_PARAM_DEFN("mb-tier", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_DEFN("settings", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_DEFN("problems", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_DEFN("off", OSSL_PARAM_UTF8_PTR, nullptr, 0),
      OSSL_PARAM_DEFN("stats-file", OSSL_PARAM_UTF8_STRING, nullptr, 0),
      OSSL_PARAM_END};
  return kGettable;
}

// "stats.<ALGORITHM>.<path>.requests" / ".bytes", the same for hand-offs
// ("stats.<ALGORITHM>.afalg-fallback:<reason>.requests"),
// "stats.<ALGORITHM>.key_setups" and "stats.<ALGORITHM>.mb.batches" /
// ".mb.lanes" as uint64.
bool SetCounterParam(OSSL_PARAM *p, const core::StatsSnapshot &snapshot) {
  const std::string_view key(p->key);
  for (const core::AlgInfo &info : core::kAlgs) {
    const std::string prefix = "stats." + std::string(info.name) + ".";
    if (!key.starts_with(prefix)) continue;
    const std::string_view rest = key.substr(prefix.size());
    const auto a = static_cast<size_t>(info.alg);
    if (rest == "key_setups") {
      return OSSL_PARAM_set_uint64(p, snapshot.key_setups[a]);
    }
    // "<name>.requests" or "<name>.bytes" of a counter called `name`.
    auto field = [&](const std::string &name,
                     const core::Counter &counter) -> int {
      if (rest == name + ".requests") {
        return OSSL_PARAM_set_uint64(p, counter.requests) ? 1 : 0;
      }
      if (rest == name + ".bytes") {
        return OSSL_PARAM_set_uint64(p, counter.bytes) ? 1 : 0;
      }
      return -1;  // not this counter
    };
    if (rest == "mb.batches") {
      return OSSL_PARAM_set_uint64(p, snapshot.mb_batches[a]);
    }
    if (rest == "mb.lanes") return OSSL_PARAM_set_uint64(p, snapshot.mb_lanes[a]);
    for (size_t path = 0; path < core::kNumPaths; ++path) {
      const int set = field(std::string(core::kPathNames[path]),
                            snapshot.at(info.alg, static_cast<core::Path>(path)));
      if (set >= 0) return set == 1;
    }
    for (size_t h = 0; h < core::kNumHandoffs; ++h) {
      const auto handoff = static_cast<core::Handoff>(h);
      const int set = field(core::HandoffStatName(handoff),
                            snapshot.at(info.alg, handoff));
      if (set >= 0) return set == 1;
    }
  }
  return true;  // unknown keys are left alone
}

// GetParams without its guard: allocation failure throws std::bad_alloc.
int GetParamsOrThrow(ProviderContext *provctx, OSSL_PARAM params[]) {
  const route::Settings &settings = provctx->router.settings();
  const char *tier =
      settings.tier != nullptr ? settings.tier->name.data() : "none";
  OSSL_PARAM *p;
  if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME)) != nullptr &&
      !SetText(p, "aesmux AES provider")) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION)) != nullptr &&
      !SetText(p, AESMUX_VERSION)) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO)) != nullptr &&
      !SetText(p, "aesmux " AESMUX_VERSION)) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS)) != nullptr &&
      !OSSL_PARAM_set_int(p, 1)) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, "tier")) != nullptr &&
      !SetText(p, tier)) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, "tier-reason")) != nullptr &&
      !SetText(p, settings.tier_reason.c_str())) {
    return 0;
  }
  // "afalg.<family>": whether the afalg path serves the family, and why,
  // and what happened on it since. That last part changes, so a caller that
  // asks for a pointer gets the probe's state alone (which does not).
  for (size_t f = 0; f < core::kNumFamilies; ++f) {
    const std::string key = "afalg." + std::string(core::kFamilyNames[f]);
    if ((p = OSSL_PARAM_locate(params, key.c_str())) == nullptr) continue;
    const auto family = static_cast<Family>(f);
    if (p->data_type == OSSL_PARAM_UTF8_PTR
            ? !SetText(p, provctx->router.afalg_state(family).c_str())
            : !OSSL_PARAM_set_utf8_string(
                  p, provctx->router.afalg_report(family).c_str())) {
      return 0;
    }
  }
  // "route.<ALGORITHM>": which path serves which lengths.
  for (const core::AlgInfo &info : core::kAlgs) {
    const std::string key = "route." + std::string(info.name);
    if ((p = OSSL_PARAM_locate(params, key.c_str())) != nullptr &&
        !SetText(p, provctx->router.route_description(info.alg).c_str())) {
      return 0;
    }
  }
  if ((p = OSSL_PARAM_locate(params, "architecture")) != nullptr &&
      !SetText(p, kernels::TargetProcessor().data())) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, "paths")) != nullptr &&
      !SetText(p, PathsText().c_str())) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, "cpu-features")) != nullptr &&
      !SetText(p, CpuFeaturesText().c_str())) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, "tiers")) != nullptr &&
      !SetText(p, TiersText().c_str())) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, "mb-tier")) != nullptr &&
      !OSSL_PARAM_set_utf8_string(p, MbTierText(settings).c_str())) {
    return 0;
  }
  if ((p = OSSL_PARAM_locate(params, "settings")) != nullptr &&
      !OSSL_PARAM_set_utf8_string(p, SettingsText(settings).c_str())) {
    return 0;
  }
  // "problems": what aesmux ignored of its configuration, and why it writes
  // no statistics where stats_file says, one a line.
  if ((p = OSSL_PARAM_locate(params, "problems")) != nullptr) {
    std::string text;
    for (const std::string &warning : provctx->warnings) text += warning + "\n";
    if (const std::string stats = core::StatsFileProblem(); !stats.empty()) {
      text += "stats_file: " + stats + "\n";
    }
    if (!OSSL_PARAM_set_utf8_string(p, text.c_str())) return 0;
  }
  // "off": why aesmux registers no algorithm; empty when it does.
  if ((p = OSSL_PARAM_locate(params, "off")) != nullptr &&
      !SetText(p, settings.off.c_str())) {
    return 0;
  }
  // "stats-file": where the statistics go, or why they do not.
  if ((p = OSSL_PARAM_locate(params, "stats-file")) != nullptr &&
      !OSSL_PARAM_set_utf8_string(p, core::StatsFileState().c_str())) {
    return 0;
  }
  for (p = params; p->key != nullptr; ++p) {
    if (std::strncmp(p->key, "setting.", 8) == 0 &&
        !SetSettingParam(p, settings)) {
      return 0;
    }
  }
  bool wants_stats = false;
  for (p = params; p->key != nullptr; ++p) {
    if (std::strncmp(p->key, "stats", 5) == 0) wants_stats = true;
  }
  if (!wants_stats) return 1;
  const core::StatsSnapshot snapshot = core::ReadStats();
  if ((p = OSSL_PARAM_locate(params, "stats")) != nullptr &&
      !OSSL_PARAM_set_utf8_string(p, core::FormatStats(snapshot).c_str())) {
    return 0;
  }
  for (p = params; p->key != nullptr; ++p) {
    if (std::strncmp(p->key, "stats.", 6) == 0 &&
        !SetCounterParam(p, snapshot)) {
      return 0;
    }
  }
  return 1;
}

int GetParams(void *vprovctx, OSSL_PARAM params[]) noexcept {
  try {
    return GetParamsOrThrow(static_cast<ProviderContext *>(vprovctx), params);
  } catch (const std::bad_alloc &) {
    ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
    return 0;
  }
}

// Nothing when aesmux is off (`disable = 1`): programs use other providers.
const OSSL_ALGORITHM *QueryOperation(void *provctx, int operation_id,
                                     int *no_cache) noexcept {
  *no_cache = 0;
  if (!static_cast<ProviderContext *>(provctx)->router.settings().off.empty())
    return nullptr;
  if (operation_id == SkeyOperation()) return SkeyManagers();
  return operation_id == OSSL_OP_CIPHER ? Algorithms() : nullptr;
}

const OSSL_DISPATCH kProviderDispatch[] = {
    {OSSL_FUNC_PROVIDER_TEARDOWN, DispatchFn(Teardown)},
    {OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, DispatchFn(GettableParams)},
    {OSSL_FUNC_PROVIDER_GET_PARAMS, DispatchFn(GetParams)},
    {OSSL_FUNC_PROVIDER_QUERY_OPERATION, DispatchFn(QueryOperation)},
    {0, nullptr}};

// Every key of the provider's openssl.cnf section, through the core in one
// call rather than one per key: the core compares each name asked for with
// its own parameters and each of the section's lines either way, and each
// call costs its own round of those comparisons.
route::SourceValues ConfigValues(const OSSL_CORE_HANDLE *handle,
                                 OSSL_FUNC_core_get_params_fn *get_params) {
  const std::span<const route::SettingNameText> names =
      route::SettingNameTexts();
  route::SourceValues values(names.size());
  if (get_params == nullptr) return values;
  std::vector<const char *> found(names.size(), nullptr);
  std::vector<OSSL_PARAM> params;
  params.reserve(names.size() + 1);
  for (size_t i = 0; i < names.size(); ++i) {
    params.push_back(OSSL_PARAM_utf8_ptr(names[i].key.data(),
                                         const_cast<char **>(&found[i]), 0));
  }
  params.push_back(OSSL_PARAM_END);
  if (!get_params(handle, params.data())) return values;
  for (size_t i = 0; i < names.size(); ++i) {
    if (found[i] != nullptr) values[i] = std::string(found[i]);
  }
  return values;
}

// Each problem on the error queue, when aesmux does not load: OpenSSL 3.0
// to 3.6 run on without a provider whose init fails, even under
// config_diagnostics = 1, and drop what it raised (crypto/provider_conf.c,
// crypto/conf/conf_mod.c); a program that loads aesmux by name sees it.
void RaiseProblems(int reason, const route::Problems &problems) {
  for (const std::vector<std::string> *list :
       {&problems.errors, &problems.warnings}) {
    for (const std::string &problem : *list) {
      ERR_raise_data(ERR_LIB_PROV, reason, "aesmux: %s", problem.c_str());
    }
  }
  if (problems.empty()) ERR_raise(ERR_LIB_PROV, reason);
}

// OpenSSL stops a program on its own configuration errors under
// config_diagnostics = 1 (OPENSSL_init_crypto fails), but not on a
// provider's: aesmux ends the process itself, as the operator asked.
// _exit, not exit: this runs inside OpenSSL's configuration, holding its
// locks, which exit's handlers (OPENSSL_cleanup) would take.
[[noreturn]] void StopForDiagnostics(const std::string &file) {
  char line[core::kMaxDiagnosticBytes];
  const int len = std::snprintf(
      line, sizeof(line),
      "aesmux: stopping the program (exit status 1): config_diagnostics = 1 "
      "in %.2000s makes the mistakes above fatal; AESMUX_DISABLE=1 turns "
      "aesmux off for one program\n",
      file.c_str());
  core::PrintDiagnostic(std::string_view(
      line, static_cast<size_t>(std::clamp(len, 0, int{sizeof(line)} - 1))));
  _exit(1);
}

int Init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
         const OSSL_DISPATCH **out, void **provctx) {
  // A program linked with libcrypto statically loads aesmux.so's libcrypto
  // beside its own, and aesmux is the first to use it: initialised without
  // an exit handler (as OpenSSL's dynamic ENGINE loader initialises an
  // ENGINE's copy), it is not torn down at exit before the program's own
  // clean-up, which still calls into aesmux and into modules sharing that
  // copy (OpenSSL 3.5's sslapitest crashed in its dasync ENGINE's destroy).
  // Where aesmux's libcrypto is the program's, it is initialised already
  // and this changes nothing.
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  OSSL_FUNC_core_get_params_fn *core_get_params = nullptr;
  for (; in->function_id != 0; ++in) {
    if (in->function_id == OSSL_FUNC_CORE_GET_PARAMS) {
      core_get_params = OSSL_FUNC_core_get_params(in);
    }
  }

  // Every mistake is printed (once per process); which keys the section
  // has, and whether config_diagnostics is set, only openssl.cnf says.
  route::Problems problems;
  const AesmuxSection section = FindAesmuxSection(handle, core_get_params);
  route::CheckConfigKeys(section.keys, section.where, &problems);
  int reason = 0;
  ProviderContext *context = NewProviderContext(
      handle, ConfigValues(handle, core_get_params), &problems, &reason);
  PrintProblems("aesmux: not loaded: ", problems);
  const bool off =
      context != nullptr && !context->router.settings().off.empty();
  if (section.diagnostics && !problems.empty() && !off) {
    StopForDiagnostics(section.file);
  }
  if (context == nullptr) {
    RaiseProblems(reason, problems);
    return 0;
  }
  *provctx = context;
  *out = kProviderDispatch;
  return 1;
}

// Loading allocates (settings, probe results, messages); running out of
// memory there refuses to load.
int InitOrRaise(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                const OSSL_DISPATCH **out, void **provctx) noexcept {
  try {
    return Init(handle, in, out, provctx);
  } catch (const std::bad_alloc &) {
    ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
    return 0;
  } catch (const std::exception &e) {
    ERR_raise_data(ERR_LIB_PROV, ERR_R_INTERNAL_ERROR, "aesmux: %s", e.what());
    return 0;
  }
}

}  // namespace

const OSSL_DISPATCH *CipherDispatch(Alg alg) {
  switch (core::Info(alg).family) {
    case Family::kEcb:
    case Family::kCbc: return BlockDispatch(alg);
    case Family::kCtr: return CtrDispatch(alg);
    case Family::kXts: return XtsDispatch(alg);
    case Family::kGcm: return GcmDispatch(alg);
  }
  return nullptr;
}

}  // namespace aesmux::openssl

// <openssl/core.h> declares this without noexcept (clang insists the
// definition match); InitOrRaise is the noexcept boundary.
extern "C" __attribute__((visibility("default"))) int OSSL_provider_init(
    const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
    const OSSL_DISPATCH **out, void **provctx) {
  return aesmux::openssl::InitOrRaise(handle, in, out, provctx);
}
