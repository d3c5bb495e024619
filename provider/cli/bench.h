// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// `aesmux bench`: aesmux, as openssl.cnf configures it, against OpenSSL's
// default provider, side by side in one process: for each algorithm and
// request size, alternating runs of each and the median of each side.
#ifndef AESMUX_PROVIDER_CLI_BENCH_H_
#define AESMUX_PROVIDER_CLI_BENCH_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace aesmux::cli {

// aesmux bench [--algs LIST] [--sizes LIST] [--decrypt] [--seconds S]
//              [--runs N]
int RunBench(const std::vector<std::string> &args);

// "16,256,1K,16K" → sizes in bytes; nullopt if an item is not a byte count.
std::optional<std::vector<size_t>> ParseSizeList(const std::string &list);

// "16 B", "1.5 KiB", "64 KiB": a request size for people.
std::string FormatSize(size_t bytes);

// The items of a comma-separated list.
std::vector<std::string> SplitList(const std::string &list);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_BENCH_H_
