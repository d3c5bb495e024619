// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Benchmark support: what the benchmark programs (tests/*/*_bench.cc) share,
// so that each keeps only its own measurements, option names, defaults and
// usage text. Header-only; not for tests, which fail through GoogleTest.
#ifndef AESMUX_TESTS_SUPPORT_BENCH_UTIL_H_
#define AESMUX_TESTS_SUPPORT_BENCH_UTIL_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace aesmux::test {

// The program's name, the prefix of Die's messages. Each benchmark that
// uses Die defines it once: const char aesmux::test::kBenchName[] = "...";
extern const char kBenchName[];

// Prints "<kBenchName>: <what>" to stderr and exits with status 1.
[[noreturn]] inline void Die(const std::string &what) {
  std::fprintf(stderr, "%s: %s\n", kBenchName, what.c_str());
  std::exit(1);
}

// The middle element of v after sorting (the upper one of an even count);
// v must not be empty.
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Interval {
  double low;
  double high;
};

// A 95% confidence interval for the median of the distribution v was drawn
// from, distribution-free: the order statistics of ranks n/2 -+ 0.98 sqrt(n)
// (the normal approximation to the binomial, n >= 10); {v's least, v's
// greatest} when v is shorter. v must not be empty.
inline Interval MedianInterval(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  if (v.size() < 10) return {v.front(), v.back()};
  const double half_width = 0.98 * std::sqrt(n);
  const auto low =
      static_cast<size_t>(std::max(0.0, std::floor(n / 2 - half_width)));
  const auto high = std::min(
      v.size() - 1, static_cast<size_t>(std::ceil(n / 2 + half_width)));
  return {v[low], v[high]};
}

// "128,256" -> {128, 256}; each item as std::atoi reads it, "" -> {}.
inline std::vector<int> ParseList(const std::string &list) {
  std::vector<int> values;
  for (size_t pos = 0; pos < list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    values.push_back(std::atoi(list.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  return values;
}

// "gcm,ctr" -> {"gcm", "ctr"}; empty items are dropped.
inline std::vector<std::string> SplitList(const std::string &list) {
  std::vector<std::string> items;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    if (comma > pos) items.push_back(list.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return items;
}

// Walks argv one option at a time; an option that takes a value reads it
// with Value, Int or Double, which die with "missing value for <option>"
// when argv ends first:
//
//   ArgReader args(argc, argv);
//   while (args.Next()) {
//     if (args.arg() == "--runs") {
//       opt.runs = args.Int(1);
//     } else {
//       Die("usage: ...");
//     }
//   }
class ArgReader {
 public:
  ArgReader(int argc, char **argv) : argc_(argc), argv_(argv) {}

  // Moves to the next option; false when argv is used up.
  bool Next() {
    if (index_ + 1 >= argc_) return false;
    arg_ = argv_[++index_];
    return true;
  }

  // The current option.
  const std::string &arg() const { return arg_; }

  // Consumes the current option's value.
  std::string Value() {
    if (index_ + 1 >= argc_) Die("missing value for " + arg_);
    return argv_[++index_];
  }

  // The value as std::atoi / std::atof read it, raised to at least `min`.
  int Int(int min = std::numeric_limits<int>::min()) {
    return std::max(min, std::atoi(Value().c_str()));
  }
  double Double(double min) {
    return std::max(min, std::atof(Value().c_str()));
  }

 private:
  int argc_;
  char **argv_;
  int index_ = 0;  // argv_[0] is the program
  std::string arg_;
};

// The CPU's "model name" from /proc/cpuinfo ("unknown CPU" without one),
// for the machine line every benchmark table carries.
inline std::string CpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) {
      return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

// One timed operation.
using Op = std::function<void()>;

// Seconds for `iterations` calls of op.
inline double Time(const Op &op, long iterations) {
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i) op();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// How many calls of op take about `batch_seconds`.
inline long Calibrate(const Op &op, double batch_seconds) {
  long iterations = 1;
  for (;;) {
    const double t = Time(op, iterations);
    if (t >= batch_seconds / 4 || iterations > (1L << 30)) {
      return std::max(1L, static_cast<long>(iterations * batch_seconds / t));
    }
    iterations *= 4;
  }
}

// 64-byte aligned scratch filled with a fixed pattern, so that no side of
// a comparison is favoured by alignment.
struct Buffer {
  explicit Buffer(size_t len) : storage(len + 64) {
    auto p = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((64 - p % 64) % 64);
    for (size_t i = 0; i < len; ++i) data[i] = static_cast<uint8_t>(i * 31 + 7);
  }
  std::vector<uint8_t> storage;
  uint8_t *data;
};

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_BENCH_UTIL_H_
