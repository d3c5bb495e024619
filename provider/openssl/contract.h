// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The parts of the cipher contract OpenSSL's default provider changed after
// 3.0, as the libcrypto aesmux runs in implements them: the same aesmux.so
// answers as that libcrypto's default provider does, whichever headers it
// was built against. Asked only off the per-record paths (arrays of several
// parameters, parameter lists, keys nobody asks for per record).
#ifndef AESMUX_PROVIDER_OPENSSL_CONTRACT_H_
#define AESMUX_PROVIDER_OPENSSL_CONTRACT_H_

// Layers (DEVELOPERS.md): only what links aesmux_edge includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_edge)
#error "provider/openssl/contract.h belongs to a layer above the one that includes it"
#endif

#include <openssl/crypto.h>

#include <cstdint>

namespace aesmux::openssl {

inline bool RunningAtLeast(unsigned long version) {
  return OpenSSL_version_num() >= version;
}

// How get/set_ctx_params (and get_params) walk an array of several
// parameters:
//   kFirstOfEachKey  each key the function knows, in a fixed order, its
//                    first occurrence (OSSL_PARAM_locate): 3.0 and 3.1,
//                    and all but GCM's until 3.5;
//   kArrayOrder      the array in order, every occurrence: GCM's, 3.2 to
//                    3.5;
//   kRefuseRepeats   the fixed order again, and an array naming one of the
//                    keys twice refused (PROV_R_REPEATED_PARAMETER) before
//                    anything is done: 3.6's generated decoders.
enum class ParamWalk : uint8_t { kFirstOfEachKey, kArrayOrder, kRefuseRepeats };

inline ParamWalk GenericParamWalk() {
  return RunningAtLeast(0x30600000UL) ? ParamWalk::kRefuseRepeats
                                      : ParamWalk::kFirstOfEachKey;
}
inline ParamWalk GcmParamWalk() {
  if (RunningAtLeast(0x30600000UL)) return ParamWalk::kRefuseRepeats;
  return RunningAtLeast(0x30200000UL) ? ParamWalk::kArrayOrder
                                      : ParamWalk::kFirstOfEachKey;
}

// GCM's "iv-generated" (3.4): whether the context's IV was ever drawn at
// random.
inline constexpr const char *kIvGeneratedKey = "iv-generated";
inline bool ReportsIvGenerated() { return RunningAtLeast(0x30400000UL); }

// The "encrypt-then-mac" algorithm parameter (3.6): 0 for every AES mode
// aesmux serves.
inline constexpr const char *kEncryptThenMacKey = "encrypt-then-mac";
inline bool ReportsEncryptThenMac() { return RunningAtLeast(0x30600000UL); }

// 3.6: GCM's tag, IV and updated IV asked for without a buffer report their
// size.
inline bool AnswersGcmSizeQueries() { return RunningAtLeast(0x30600000UL); }

// PROV_R_REPEATED_PARAMETER (3.6's proverr.h).
inline constexpr int kRepeatedParameterReason = 252;

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_CONTRACT_H_
