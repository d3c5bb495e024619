// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The state of one aesmux instance: one per library context that loads the
// provider, and one for the ENGINE while it is initialised. Its settings
// bind its router; its fallback library is private to it.
#ifndef AESMUX_PROVIDER_OPENSSL_PROVIDER_CONTEXT_H_
#define AESMUX_PROVIDER_OPENSSL_PROVIDER_CONTEXT_H_

// Layers (DEVELOPERS.md): only what links aesmux_edge includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_edge)
#error "provider/openssl/provider_context.h belongs to a layer above the one that includes it"
#endif

#include <openssl/core.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provider/fallback/fallback.h"
#include "provider/route/router.h"
#include "provider/route/settings.h"

namespace aesmux::openssl {

struct ProviderContext {
  ProviderContext(const OSSL_CORE_HANDLE *core_handle,
                  std::unique_ptr<fallback::FallbackLibrary> fallback_library,
                  route::Settings settings,
                  std::vector<std::string> configuration_warnings)
      : handle(core_handle),
        fallback(std::move(fallback_library)),
        router(std::move(settings), fallback.get()),
        warnings(std::move(configuration_warnings)) {}

  const OSSL_CORE_HANDLE *handle;  // null for the ENGINE
  std::unique_ptr<fallback::FallbackLibrary> fallback;
  route::Router router;
  // Holders of the instance: its maker (the provider until teardown, the
  // ENGINE while it is initialised) and anything that must not outlive it
  // without a hold (the ENGINE's cipher contexts, which libcrypto lets
  // outlive the ENGINE's last ENGINE_finish). A provider's cipher contexts
  // hold none: libcrypto keeps the provider, so its teardown waits for
  // every context of it (each holds its fetched cipher, which holds the
  // provider).
  std::atomic<uint32_t> holds{1};
  // What it ignored of its configuration (route::Problems), for `aesmux
  // info`.
  std::vector<std::string> warnings;
};

// Makes an instance from the settings in `config` (the provider's
// openssl.cnf section, or the ENGINE's control commands) and the AESMUX_*
// environment (its values, and a warning for each variable aesmux does not
// read), and registers it for the statistics file. Adds every mistake to
// `problems`, which may already hold others (they are kept with the
// instance). Returns null when it cannot: `problems` has an error, or
// there was no memory; `reason` is the PROV_R_* code to raise. Never
// throws.
ProviderContext *NewProviderContext(const OSSL_CORE_HANDLE *handle,
                                    const route::SourceValues &config,
                                    route::Problems *problems, int *reason);

// Prints `problems` on stderr, each line at most once per process (a
// program loads aesmux into every library context it makes, and a program
// that loads it for every connection would repeat it each time): an error
// after `error_prefix` ("aesmux: not loaded: "), a warning after
// "aesmux: warning: ".
void PrintProblems(std::string_view error_prefix,
                   const route::Problems &problems) noexcept;

// One more hold on an instance (it has one from NewProviderContext).
void HoldProviderContext(ProviderContext *context);
// Gives up a hold; the last frees the instance, and the last instance of
// the process to go writes the statistics file.
void FreeProviderContext(ProviderContext *context);

// This process's statistics as the table `aesmux stats` prints
// (provider/core/stats_table.h), with `context`'s afalg state as its notes
// (none without a context): the ENGINE's DUMP_STATS.
std::string StatsTable(const ProviderContext *context);

// An AESMUX_* environment variable; unset and empty are the same.
// secure_getenv: setuid programs ignore the environment, as OpenSSL itself
// does.
std::optional<std::string> EnvValue(std::string_view name);

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_PROVIDER_CONTEXT_H_
