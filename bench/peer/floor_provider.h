// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Two minimal providers of AES-128-GCM and AES-256-GCM, built into
// evp_floor_bench (OSSL_PROVIDER_add_builtin), that measure what OpenSSL
// 3's libcrypto spends per record around any provider:
//
//   floor_nothing  the dispatch functions and parameters of a real GCM
//                  cipher, but no cryptography: update reports its input as
//                  processed and writes nothing, the tag is zeros and a
//                  decryption's tag is not checked. libcrypto runs its
//                  whole normal path; the provider's part is a few dozen
//                  instructions. Not a cipher: never use it for data.
//   floor_thin     the same functions doing the real work on aesmux's
//                  kernels through kernels::SimdGcm with the least glue
//                  around it: what the best provider on these kernels
//                  could reach under libcrypto 3.
//
// Both serve the parameters a record and libcrypto's fetch use: cipher
// get_params (mode, key and IV length, block size, AEAD, custom IV, CTS,
// TLS multiblock, random key), context get (KEYLEN, IVLEN, AEAD_TAGLEN,
// IV, UPDATED_IV, AEAD_TAG) and set (AEAD_IVLEN, AEAD_TAG), with their
// gettable/settable lists. The TLS 1.2 record parameters (TLS1_AAD,
// TLS1_IV_FIXED, ...) are left out: EVP_CIPHER records of the kind
// peer_bench times do not use them.
#ifndef AESMUX_TESTS_PEER_FLOOR_PROVIDER_H_
#define AESMUX_TESTS_PEER_FLOOR_PROVIDER_H_

#include <openssl/types.h>

#include <string>

namespace aesmux::test {

// The providers' names, also their "provider=" property.
inline constexpr char kFloorNothing[] = "floor_nothing";
inline constexpr char kFloorThin[] = "floor_thin";

// Both providers added to a library context and loaded, floor_thin on the
// kernel tier `tier` (empty: the best this CPU runs), for as long as this
// object lives; destroy it before the context. One per process: the tier
// is the process's.
class FloorProviders {
 public:
  FloorProviders(OSSL_LIB_CTX *libctx, const std::string &tier);
  ~FloorProviders();
  FloorProviders(const FloorProviders &) = delete;
  FloorProviders &operator=(const FloorProviders &) = delete;

  // "" once both are loaded, else why not.
  const std::string &error() const { return error_; }
  // The tier floor_thin runs.
  std::string tier() const;

 private:
  OSSL_PROVIDER *nothing_ = nullptr;
  OSSL_PROVIDER *thin_ = nullptr;
  std::string error_;
};

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_PEER_FLOOR_PROVIDER_H_
