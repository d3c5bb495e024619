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

// A mode family: algorithms of one family share thresholds, a context type
// at the OpenSSL edge and the constants of kFamilies.
enum class Family : uint8_t { kEcb, kCbc, kCtr, kXts, kGcm };
inline constexpr size_t kNumFamilies = 5;

enum class Alg : uint8_t {
  kAes128Ecb, kAes192Ecb, kAes256Ecb,
  kAes128Cbc, kAes192Cbc, kAes256Cbc,
  kAes128Ctr, kAes192Ctr, kAes256Ctr,
  kAes128Xts, kAes256Xts,
  kAes128Gcm, kAes192Gcm, kAes256Gcm,
};
inline constexpr size_t kNumAlgs = 14;

// The one declaration of every cipher aesmux serves: its family's row in
// kFamilies and its own in kAlgs. Everything else is derived from these
// two tables: the provider's algorithm table and the constants its
// get_params reports (provider/openssl/), the ENGINE's ciphers
// (engine_compat/), the AF_ALG algorithm names (provider/afalg/), the
// statistics and settings keys, and the fuzzers' cipher list
// (tests/fuzz/). Core includes no OpenSSL header, so OpenSSL's numbers are
// written here as plain values, with OpenSSL's names beside them;
// tests/provider/cipher_table_test.cc holds every row against OpenSSL's
// default provider.

// What the algorithms of one family share.
struct FamilyInfo {
  Family family;
  std::string_view name;  // "cbc": settings keys, statistics, "afalg.cbc"
  unsigned mode;          // EVP_CIPH_<MODE>_MODE
  size_t iv_len;          // the default IV length in bytes (0: no IV)
  size_t block_size;      // as OpenSSL reports it (1 for CTR, XTS, GCM)
  bool aead;              // authenticated, with a tag and AAD
  bool custom_iv;         // the context keeps its IV (OpenSSL's custom_iv)
  // The Linux kernel crypto API's algorithm (AF_ALG socket type and name).
  std::string_view kernel_type;
  std::string_view kernel_name;
};

inline constexpr std::array<FamilyInfo, kNumFamilies> kFamilies = {{
    // family, name, mode (EVP_CIPH_*_MODE), IV bytes, block bytes, aead,
    // custom_iv, AF_ALG type and name
    {Family::kEcb, "ecb", 0x1, 0, 16, false, false, "skcipher", "ecb(aes)"},
    {Family::kCbc, "cbc", 0x2, 16, 16, false, false, "skcipher", "cbc(aes)"},
    {Family::kCtr, "ctr", 0x5, 16, 1, false, false, "skcipher", "ctr(aes)"},
    {Family::kXts, "xts", 0x10001, 16, 1, false, true, "skcipher",
     "xts(aes)"},
    {Family::kGcm, "gcm", 0x6, 12, 1, true, true, "aead", "gcm(aes)"},
}};

// One cipher.
struct AlgInfo {
  Alg alg;
  std::string_view name;  // OpenSSL's canonical name, as in the statistics
  // The other names OpenSSL's default provider registers it under,
  // ':'-separated, and its ASN.1 object identifier; either may be empty.
  std::string_view aliases;
  std::string_view oid;
  int nid;  // OpenSSL's NID_aes_<bits>_<mode>: the ENGINE's cipher
  Family family;
  size_t key_len;  // bytes; for XTS both halves together
};

inline constexpr std::array<AlgInfo, kNumAlgs> kAlgs = {{
    // alg, name, aliases, OID,
    // NID, family, key bytes
    {Alg::kAes128Ecb, "AES-128-ECB", "", "2.16.840.1.101.3.4.1.1",
     418 /* NID_aes_128_ecb */, Family::kEcb, 16},
    {Alg::kAes192Ecb, "AES-192-ECB", "", "2.16.840.1.101.3.4.1.21",
     422 /* NID_aes_192_ecb */, Family::kEcb, 24},
    {Alg::kAes256Ecb, "AES-256-ECB", "", "2.16.840.1.101.3.4.1.41",
     426 /* NID_aes_256_ecb */, Family::kEcb, 32},
    {Alg::kAes128Cbc, "AES-128-CBC", "AES128", "2.16.840.1.101.3.4.1.2",
     419 /* NID_aes_128_cbc */, Family::kCbc, 16},
    {Alg::kAes192Cbc, "AES-192-CBC", "AES192", "2.16.840.1.101.3.4.1.22",
     423 /* NID_aes_192_cbc */, Family::kCbc, 24},
    {Alg::kAes256Cbc, "AES-256-CBC", "AES256", "2.16.840.1.101.3.4.1.42",
     427 /* NID_aes_256_cbc */, Family::kCbc, 32},
    {Alg::kAes128Ctr, "AES-128-CTR", "", "",
     904 /* NID_aes_128_ctr */, Family::kCtr, 16},
    {Alg::kAes192Ctr, "AES-192-CTR", "", "",
     905 /* NID_aes_192_ctr */, Family::kCtr, 24},
    {Alg::kAes256Ctr, "AES-256-CTR", "", "",
     906 /* NID_aes_256_ctr */, Family::kCtr, 32},
    {Alg::kAes128Xts, "AES-128-XTS", "", "1.3.111.2.1619.0.1.1",
     913 /* NID_aes_128_xts */, Family::kXts, 32},
    {Alg::kAes256Xts, "AES-256-XTS", "", "1.3.111.2.1619.0.1.2",
     914 /* NID_aes_256_xts */, Family::kXts, 64},
    {Alg::kAes128Gcm, "AES-128-GCM", "id-aes128-GCM", "2.16.840.1.101.3.4.1.6",
     895 /* NID_aes_128_gcm */, Family::kGcm, 16},
    {Alg::kAes192Gcm, "AES-192-GCM", "id-aes192-GCM", "2.16.840.1.101.3.4.1.26",
     898 /* NID_aes_192_gcm */, Family::kGcm, 24},
    {Alg::kAes256Gcm, "AES-256-GCM", "id-aes256-GCM", "2.16.840.1.101.3.4.1.46",
     901 /* NID_aes_256_gcm */, Family::kGcm, 32},
}};

// Each table is indexed by its enum: row i is the enumerator of value i.
static_assert([] {
  for (size_t i = 0; i < kNumFamilies; ++i) {
    if (static_cast<size_t>(kFamilies[i].family) != i) return false;
  }
  for (size_t i = 0; i < kNumAlgs; ++i) {
    if (static_cast<size_t>(kAlgs[i].alg) != i) return false;
  }
  return true;
}());

constexpr const FamilyInfo &Info(Family family) {
  return kFamilies[static_cast<size_t>(family)];
}

constexpr const AlgInfo &Info(Alg alg) {
  return kAlgs[static_cast<size_t>(alg)];
}

inline constexpr std::array<std::string_view, kNumFamilies> kFamilyNames =
    [] {
      std::array<std::string_view, kNumFamilies> names{};
      for (const FamilyInfo &info : kFamilies) {
        names[static_cast<size_t>(info.family)] = info.name;
      }
      return names;
    }();

constexpr std::string_view FamilyName(Family family) {
  return Info(family).name;
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
