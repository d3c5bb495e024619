// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/fuzz/report.h"

#include <openssl/err.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace aesmux::fuzz {
namespace {

struct Trace {
  bool print = std::getenv("AESMUX_FUZZ_TRACE") != nullptr;
  int slot = -1;  // the context pair the operation works on
  std::vector<std::string> lines;
};
Trace &GetTrace() {
  static Trace trace;
  return trace;
}

}  // namespace

void StartTrace() {
  GetTrace().lines.clear();
  GetTrace().slot = -1;
}

void SetTraceSlot(int slot) { GetTrace().slot = slot; }

bool Tracing() { return GetTrace().print; }

void Note(std::string line) {
  Trace &trace = GetTrace();
  if (trace.slot >= 0) line = "[" + std::to_string(trace.slot) + "] " + line;
  if (trace.print) std::fprintf(stderr, "op: %s\n", line.c_str());
  trace.lines.push_back(std::move(line));
}

[[noreturn]] void Fail(const std::string &what) {
  std::fprintf(stderr, "\n=== aesmux and the default provider disagree ===\n");
  for (const std::string &line : GetTrace().lines) {
    std::fprintf(stderr, "  %s\n", line.c_str());
  }
  std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
  std::abort();
}

std::string Hex(const uint8_t *data, size_t len) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(len, 96); ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  if (len > 96) out += "...";
  return out;
}

ErrorCodes TakeErrorCodes() {
  ErrorCodes codes;
  unsigned long code;
  while ((code = ERR_get_error()) != 0) {
    codes.emplace_back(ERR_GET_LIB(code), ERR_GET_REASON(code));
  }
  return codes;
}

namespace {

std::string Describe(const ErrorCodes &codes) {
  std::string out = "[";
  for (const auto &[lib, reason] : codes) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), " %d:%d", lib, reason);
    out += buf;
  }
  return out + " ]";
}

}  // namespace

void ExpectSame(bool same, const std::string &what) {
  if (!same) Fail(what);
}

void ExpectSameErrors(const ErrorCodes &ours, const ErrorCodes &theirs,
                      const char *what) {
  if (ours != theirs) {
    Fail(std::string(what) + ": error queue aesmux " + Describe(ours) +
         ", default " + Describe(theirs));
  }
}

void ExpectSameBytes(const uint8_t *ours, const uint8_t *theirs, size_t len,
                     const char *what) {
  if (std::memcmp(ours, theirs, len) != 0) {
    size_t first = 0;
    while (ours[first] == theirs[first]) ++first;
    Fail(std::string(what) + ": bytes differ from offset " +
         std::to_string(first) + " of " + std::to_string(len) +
         "\n  aesmux  " + Hex(ours, len) + "\n  default " + Hex(theirs, len));
  }
}

}  // namespace aesmux::fuzz
