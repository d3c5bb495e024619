// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The answers the probe checks a kernel implementation against, one per
// family and key size, so that a key size the driver takes but does not
// compute (or refuses) is known before any request goes there.
//
// Every answer encrypts the block 00 11 22 … ff with the key 00 01 02 …
// (as many bytes as the key has) and a zero IV (16 bytes; GCM 12, no AAD):
// ECB and CBC are FIPS-197's examples (appendix C); CTR, XTS and GCM were
// computed with OpenSSL's default provider, and kernel_crypto_test checks
// every one against it.
#ifndef AESMUX_PROVIDER_AFALG_KNOWN_ANSWERS_H_
#define AESMUX_PROVIDER_AFALG_KNOWN_ANSWERS_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/known_answers.h belongs to a layer above the one that includes it"
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "provider/core/algorithm.h"

namespace aesmux::afalg {

inline constexpr std::array<uint8_t, 16> kKnownAnswerInput = {
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
    0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};

struct KnownAnswer {
  core::Family family;
  size_t key_len;
  std::string_view output;  // hex: the ciphertext block (GCM: and the tag)
};

inline constexpr std::array<KnownAnswer, 14> kKnownAnswers = {{
    {core::Family::kEcb, 16, "69c4e0d86a7b0430d8cdb78070b4c55a"},
    {core::Family::kEcb, 24, "dda97ca4864cdfe06eaf70a0ec0d7191"},
    {core::Family::kEcb, 32, "8ea2b7ca516745bfeafc49904b496089"},
    {core::Family::kCbc, 16, "69c4e0d86a7b0430d8cdb78070b4c55a"},
    {core::Family::kCbc, 24, "dda97ca4864cdfe06eaf70a0ec0d7191"},
    {core::Family::kCbc, 32, "8ea2b7ca516745bfeafc49904b496089"},
    {core::Family::kCtr, 16, "c6b01904c3da3df5e7d62bd96d153686"},
    {core::Family::kCtr, 24, "917373b15826c3554b0f7c9cf4dc78f8"},
    {core::Family::kCtr, 32, "f28122856e1cf9a7216a30d111f3997f"},
    {core::Family::kXts, 32, "171c69724dcf733f9aa6317d795153e4"},
    {core::Family::kXts, 64, "a38034920a5f4ead990482ea32f445b8"},
    {core::Family::kGcm, 16,
     "49c7a560ddcec0fb6b10d0d3ac5c5e62009a3ddde6a6de552a3492da411b7c38"},
    {core::Family::kGcm, 24,
     "db1230b8f318425b0bdbe89d3b17cb396c864f0e916e6fe66995849303e16991"},
    {core::Family::kGcm, 32,
     "0ead97edf179e5ca8031038ed4f17f66c86f7dfba91470fc990a144a2813ca01"},
}};

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_KNOWN_ANSWERS_H_
