// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Reporting for the fuzz harness: a trace of the operations of the current
// input (printed as they run with AESMUX_FUZZ_TRACE=1, and on a failure),
// the error codes on OpenSSL's queue, and the comparisons that abort with a
// description when aesmux and the default provider disagree (libFuzzer then
// keeps the input).
#ifndef AESMUX_TESTS_FUZZ_REPORT_H_
#define AESMUX_TESTS_FUZZ_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace aesmux::fuzz {

// Starts the trace of a new input.
void StartTrace();
// The context pair the following operations work on (-1: none).
void SetTraceSlot(int slot);
bool Tracing();
// Adds one operation to the trace.
void Note(std::string line);

// Prints the trace and `what`, and aborts.
[[noreturn]] void Fail(const std::string &what);

// At most 96 bytes of `data` in hex.
std::string Hex(const uint8_t *data, size_t len);

// (library, reason) of each error on the queue, oldest first.
using ErrorCodes = std::vector<std::pair<int, int>>;
// Empties the queue.
ErrorCodes TakeErrorCodes();

void ExpectSame(bool same, const std::string &what);
template <typename T>
void ExpectEqual(const T &ours, const T &theirs, const char *what) {
  if (!(ours == theirs)) {
    Fail(std::string(what) + ": aesmux " + std::to_string(ours) +
         ", default " + std::to_string(theirs));
  }
}
void ExpectSameErrors(const ErrorCodes &ours, const ErrorCodes &theirs,
                      const char *what);
void ExpectSameBytes(const uint8_t *ours, const uint8_t *theirs, size_t len,
                     const char *what);

}  // namespace aesmux::fuzz

#endif  // AESMUX_TESTS_FUZZ_REPORT_H_
