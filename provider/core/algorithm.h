// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The algorithms aesmux serves and the paths that can serve them: the shared
// vocabulary of every layer (the paths, the router, the statistics and the
// OpenSSL edge), kept below them all (DEVELOPERS.md, "Layers").
#ifndef AESMUX_PROVIDER_CORE_ALGORITHM_H_
#define AESMUX_PROVIDER_CORE_ALGORITHM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace aesmux::core {

// A mode family: algorithms of one family share thresholds and a context
// type at the OpenSSL edge.
enum class Family : uint8_t { kEcb, kCbc, kCtr, kXts, kGcm };
inline constexpr size_t kNumFamilies = 5;

inline constexpr std::array<std::string_view, kNumFamilies> kFamilyNames = {
    "ecb", "cbc", "ctr", "xts", "gcm"};

constexpr std::string_view FamilyName(Family family) {
  return kFamilyNames[static_cast<size_t>(family)];
}

enum class Alg : uint8_t {
  kAes128Ecb, kAes192Ecb, kAes256Ecb,
  kAes128Cbc, kAes192Cbc, kAes256Cbc,
  kAes128Ctr, kAes192Ctr, kAes256Ctr,
  kAes128Xts, kAes256Xts,
  kAes128Gcm, kAes192Gcm, kAes256Gcm,
};
inline constexpr size_t kNumAlgs = 14;

struct AlgInfo {
  Alg alg;
  std::string_view name;  // OpenSSL's canonical name, as in the statistics
  Family family;
  size_t key_len;  // bytes; for XTS both halves together
};

inline constexpr std::array<AlgInfo, kNumAlgs> kAlgs = {{
    {Alg::kAes128Ecb, "AES-128-ECB", Family::kEcb, 16},
    {Alg::kAes192Ecb, "AES-192-ECB", Family::kEcb, 24},
    {Alg::kAes256Ecb, "AES-256-ECB", Family::kEcb, 32},
    {Alg::kAes128Cbc, "AES-128-CBC", Family::kCbc, 16},
    {Alg::kAes192Cbc, "AES-192-CBC", Family::kCbc, 24},
    {Alg::kAes256Cbc, "AES-256-CBC", Family::kCbc, 32},
    {Alg::kAes128Ctr, "AES-128-CTR", Family::kCtr, 16},
    {Alg::kAes192Ctr, "AES-192-CTR", Family::kCtr, 24},
    {Alg::kAes256Ctr, "AES-256-CTR", Family::kCtr, 32},
    {Alg::kAes128Xts, "AES-128-XTS", Family::kXts, 32},
    {Alg::kAes256Xts, "AES-256-XTS", Family::kXts, 64},
    {Alg::kAes128Gcm, "AES-128-GCM", Family::kGcm, 16},
    {Alg::kAes192Gcm, "AES-192-GCM", Family::kGcm, 24},
    {Alg::kAes256Gcm, "AES-256-GCM", Family::kGcm, 32},
}};

constexpr const AlgInfo &Info(Alg alg) {
  return kAlgs[static_cast<size_t>(alg)];
}

// Where a request runs.
enum class Path : uint8_t {
  kSimd,      // our nasm kernels, one request at a time
  kFallback,  // OpenSSL's default provider in a private library context
  kAfalg,     // the kernel crypto API through AF_ALG sockets and io_uring
  kMb,        // our multi-buffer kernels, several requests in SIMD lanes
};
inline constexpr size_t kNumPaths = 4;

inline constexpr std::array<std::string_view, kNumPaths> kPathNames = {
    "simd", "fallback", "afalg", "mb"};

constexpr std::string_view PathName(Path path) {
  return kPathNames[static_cast<size_t>(path)];
}

// Why the afalg path handed a request it was chosen for to the next path.
// The request is then served (and counted) there; these count the hand-offs.
enum class Handoff : uint8_t {
  kForked,       // a forked child that has not set up AF_ALG (afalg_fork)
  kUnhealthy,    // the path failed recently and is resting (backoff)
  kTooLong,      // longer than one AF_ALG request may be (XTS, GCM)
  kUnsupported,  // a shape AF_ALG cannot take: GCM IV not 12 bytes, tag
                 // not 16 bytes or not known before the payload
  kGcmSplit,     // a GCM message went on after its first payload
  kBadTag,       // the kernel rejected a GCM tag; the message is replayed
                 // on the next path for its plaintext, and fails there too
  kRingFull,     // no room in this thread's io_uring ring
  kSetup,        // socket, bind, key, accept or ring set-up failed, or
                 // memory for the request's copies
  kSubmit,       // io_uring_enter failed
  kBusy,         // EBUSY from the kernel
  kRefused,      // EINVAL from the kernel: the driver refused the request
  kIoError,      // any other error or a short result
  kFdBudget,     // a socket or ring it needed would break the descriptor
                 // budget (provider/afalg/fd_budget.h), or the process has
                 // no descriptor left
  kKeyRefused,   // the driver refused the key (an offload engine out of
                 // sessions, a key size it lacks): this key stays off the
                 // path, the path stays on for the others
  kDriverGone,   // the family's driver left /proc/crypto (its device was
                 // removed): the requests it lost, and every one since
};
inline constexpr size_t kNumHandoffs = 15;

inline constexpr std::array<std::string_view, kNumHandoffs> kHandoffNames = {
    "forked", "unhealthy", "too_long", "unsupported", "gcm_split", "bad_tag",
    "ring_full", "setup", "submit", "ebusy", "einval", "io_error",
    "fd_budget", "key_refused", "driver_gone"};

constexpr std::string_view HandoffName(Handoff handoff) {
  return kHandoffNames[static_cast<size_t>(handoff)];
}

enum class Direction : uint8_t { kDecrypt, kEncrypt };

// A piece of one request: consecutive segments form one stream.
struct Segment {
  uint8_t *out;
  const uint8_t *in;
  size_t len;
};

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_ALGORITHM_H_
