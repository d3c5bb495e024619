// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// `aesmux info`: what aesmux does on this machine, as the provider itself
// reports it through its parameters: OpenSSL, CPU features, the kernel tiers
// and the one in use, each algorithm's route, the multi-buffer lanes, the
// afalg probe per family, and every setting in force with its origin.
#ifndef AESMUX_PROVIDER_CLI_INFO_H_
#define AESMUX_PROVIDER_CLI_INFO_H_

#include <span>
#include <string>
#include <vector>

#include "provider/cli/args.h"

namespace aesmux::cli {

// aesmux info [--json]
int RunInfo(const std::vector<std::string> &args);
std::span<const OptionSpec> InfoOptionSpecs();

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_INFO_H_
