// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support: every heap allocation of the process seen by one tracker,
// which can make allocations fail on demand and look for secrets in
// memory.
//
// Linking alloc_hooks.cc into a test binary replaces the global operator
// new and delete (aesmux.so, loaded into the binary, uses the binary's: the
// binary exports them); InstallOpenSslHooks() routes OpenSSL's allocations
// (CRYPTO_malloc & co., the default provider's included) through the same
// tracker. It must run before OpenSSL allocates anything: first thing in
// main(). Plain malloc() calls of other libraries are not seen.
//
// Each tracked block has a header, so that the tracker knows its size and
// keeps every live block on a list: a freed block is searched for the
// watched secrets just before it is released, and the live blocks can be
// searched on demand. Nothing here allocates from the heap.
#ifndef AESMUX_TESTS_SUPPORT_ALLOC_HOOKS_H_
#define AESMUX_TESTS_SUPPORT_ALLOC_HOOKS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace aesmux::test::alloc {

// Routes OpenSSL's allocator through the tracker; false if OpenSSL has
// allocated already (then nothing changes).
bool InstallOpenSslHooks();

// Failure injection, for the calling thread only: from the `n`th
// allocation on (1: the next one), every allocation fails (operator new
// throws std::bad_alloc, its nothrow forms and OpenSSL's allocator return
// null) until StopFailing().
void FailFrom(uint64_t n);
void StopFailing();
// Whether an allocation failed by injection since the last FailFrom().
bool InjectedFailure();

// Secrets that no freed block may hold: up to 256 byte strings of at most
// 64 bytes each, copied into static storage (not the heap), with a name for
// messages.
void Watch(std::span<const uint8_t> secret, const char *name);
void ForgetWatched();
// Freed blocks that held a watched secret since the last ForgetWatched(),
// one line each ("<name> in a freed block of <n> bytes"); empty if none.
std::string FreedBlocksHoldingSecrets();
// How many live blocks hold `bytes` now, leaving out blocks of
// `ignored_size` bytes if it is not 0.
size_t LiveBlocksHolding(std::span<const uint8_t> bytes,
                         size_t ignored_size = 0);

}  // namespace aesmux::test::alloc

#endif  // AESMUX_TESTS_SUPPORT_ALLOC_HOOKS_H_
