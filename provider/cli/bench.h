// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// `aesmux bench`: aesmux, as openssl.cnf configures it, against OpenSSL's
// default provider, side by side in one process: for each algorithm and
// request size, alternating runs of each and the median of each side.
#ifndef AESMUX_PROVIDER_CLI_BENCH_H_
#define AESMUX_PROVIDER_CLI_BENCH_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "provider/cli/args.h"

namespace aesmux::cli {

// aesmux bench [--algs LIST] [--sizes LIST] [--decrypt] [--seconds S]
//              [--runs N] [--elapsed]
int RunBench(const std::vector<std::string> &args);
std::span<const OptionSpec> BenchOptionSpecs();

// "16,256,1K,16K" → sizes in bytes; nullopt, with what is wrong with which
// item in `error`, if an item is not a byte count from 1 B to 1 GiB.
std::optional<std::vector<size_t>> ParseSizeList(const std::string &list,
                                                 std::string *error);

// "16 B", "1.5 KiB", "64 KiB": a request size for people.
std::string FormatSize(size_t bytes);

// The items of a comma-separated list.
std::vector<std::string> SplitList(const std::string &list);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_BENCH_H_
