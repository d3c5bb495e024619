// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// What the fuzz harness knows of the default provider's state, where it
// decides what may be compared: where aesmux deliberately differs
// (docs/differences.md), where OpenSSL 3.0's default
// provider has defects of its own, and where both draw random bytes. Each
// field says which case it follows; Comparable() is false while the states
// of the two providers have parted.
#ifndef AESMUX_TESTS_FUZZ_MODEL_H_
#define AESMUX_TESTS_FUZZ_MODEL_H_

#include <openssl/prov_ssl.h>

#include <cstddef>
#include <cstdint>

#include "tests/fuzz/report.h"

namespace aesmux::fuzz {

struct Model {
  // The direction of the default provider's algorithm context where it
  // differs from EVP's: EVP takes an init's direction before it refuses the
  // init's keylen or ivlen parameter, and the provider never sees that init
  // (-1: the same as EVP's). EVP routes EVP_EncryptUpdate and friends by
  // its own flag; the provider works in its own direction.
  int provider_enc = -1;

  // ECB, CBC, XTS: the direction the default provider's key schedule was
  // made for. It keeps it when only the direction changes
  // (docs/differences.md); -1 before any key.
  int key_enc = -1;
  // Data ran with the schedule of the other direction: outputs (and, for
  // CBC, the chaining value) differ until the next key.
  bool schedule_diverged = false;

  // GCM: a shadow of the default provider's IV state machine
  // (ciphercommon_gcm.c), key and tag length.
  enum class GcmIv { kUninitialised, kBuffered, kCopied, kFinished };
  GcmIv gcm_iv = GcmIv::kUninitialised;
  bool gcm_key = false;
  // The default provider's tag length (without one decrypting cannot
  // finish): unset, set, or maybe set, after a failed TLS record (its
  // one-shot sets the length ahead of the tag check). Maybe: whether a
  // decryption's final checks a tag is not known, until a tag is set or an
  // encryption finishes.
  enum class GcmTagLen { kUnset, kMaybe, kSet };
  GcmTagLen gcm_tag_len = GcmTagLen::kUnset;
  bool tls_aad_pending = false;
  // The TLS AAD came in a set that failed after a tag or IV length before
  // it: the default provider may have stopped there, without the AAD.
  bool tls_aad_unsure = false;
  // A key was set in the middle of a message: aesmux ends the message (a
  // new IV is required), the default provider goes on from a zeroed GCM
  // state (docs/differences.md). Until a new IV: no comparison of GCM data.
  bool gcm_interrupted = false;
  // A decryption's final found the tag wrong: the message goes on, but no
  // later final of it succeeds in aesmux (docs/differences.md); the
  // default provider's later finals check or make tags from a GHASH state
  // its finish changed.
  bool gcm_tag_failed = false;
  // A final ran while interrupted or after a wrong tag (the default
  // provider made a tag, aesmux did not), or on a random IV. The tags
  // differ until the next final or tag set.
  bool gcm_tag_differs = false;
  // A decryption's final checked tags that differ: which message state
  // each provider is in depends on it, until a new IV.
  bool gcm_unsynced = false;
  // IV bytes drawn at random (encrypting without an IV, tlsivfixed's
  // invocation field): the two providers drew different ones.
  bool gcm_random_iv = false;
  // The message's AAD bytes so far and whether payload came. An empty
  // payload call (EVP_Cipher with input, length 0) on a partial block of
  // AAD makes the default provider pad that block; AAD after it then
  // starts a new block (aad_split), so its tag is no GCM tag of the
  // message's AAD, while aesmux's is (docs/differences.md): the tags
  // differ, as does a decryption's verdict.
  uint64_t gcm_aad_len = 0;
  bool gcm_payload = false;
  bool gcm_aad_padded = false;
  bool gcm_aad_split = false;

  // TLS record mode as set (ECB, CBC, CTR).
  unsigned int tls_version = 0;
  size_t tls_mac_size = 0;
  // The default provider holds a MAC it allocated (CBC) that its dupctx
  // would share, so freeing both copies would free it twice.
  bool mac_allocated = false;
  // Bytes of the MAC of the last decrypted record (0: none), and whether it
  // is random (bad padding: each provider draws its own). CTR: the
  // generation of the kept buffers it points into.
  size_t mac_held = 0;
  bool mac_random = false;
  uint64_t mac_generation = 0;

  // An IV was set (CBC re-inits without one go back to it).
  bool iv_set = false;
  // ECB, CBC: bytes the default provider holds between updates (a partial
  // block, or the last block when decrypting with padding).
  size_t held = 0;
  // ECB, CBC: a call the default provider gets wrong ran (see RunData): the
  // held bytes and the chaining value may differ until the next init.
  bool block_diverged = false;

  // num set to a value one side refuses and the other takes (CTR 1..15 on
  // OpenSSL 3.0.20+, ECB and CBC 16 and more on 3.0.19): until an init with
  // an IV.
  bool num_diverged = false;

  // The harness cannot tell the default provider's state (an init whose
  // parameters failed half-way, ...): no comparison until a new context.
  bool unknown = false;

  bool Comparable() const {
    return !schedule_diverged && !gcm_interrupted && !gcm_unsynced &&
           !num_diverged &&
           !block_diverged && !unknown;
  }

  // GCM: the IV state becomes `state` through a new IV (set, taken by
  // tlsivgen or tlsivinv, or a TLS record's).
  void GcmNewIv(GcmIv state) {
    gcm_iv = state;
    gcm_interrupted = false;
    gcm_tag_failed = false;
    gcm_unsynced = false;
    GcmNewMessage();
  }

  void GcmNewMessage() {
    gcm_aad_len = 0;
    gcm_payload = false;
    gcm_aad_padded = false;
    gcm_aad_split = false;
  }

  // GCM: a key set at init, after the init's IV if any.
  void GcmKey(bool new_iv) {
    if (gcm_iv == GcmIv::kCopied && !new_iv) gcm_interrupted = true;
    gcm_key = true;
  }

  // GCM: a final (or EVP_Cipher's finish) reaches the provider. Whether its
  // results may be compared; where aesmux deliberately differs, it must
  // have failed.
  bool GcmFinalComparable(bool enc, bool aesmux_ok) {
    if (gcm_interrupted || gcm_tag_failed) {
      if (aesmux_ok) Fail("aesmux finished an interrupted GCM message");
      return false;
    }
    const bool tags_differ = (gcm_tag_differs || gcm_aad_split) && gcm_key &&
                             gcm_tag_len == GcmTagLen::kSet;
    if (!enc && gcm_iv != GcmIv::kFinished &&
        (tags_differ || gcm_tag_len == GcmTagLen::kMaybe)) {
      gcm_unsynced = true;
      return false;
    }
    return Comparable();
  }

  // GCM: what a call of the default provider's gcm_cipher_internal (AAD,
  // data, or finish) did, given whether it succeeded. `iv_len` is the IV
  // length before the call, `len` the AAD's or payload's.
  enum class GcmCall { kAad, kData, kFinish };
  void GcmCalled(GcmCall call, bool enc, bool ok, size_t iv_len,
                 size_t len = 0) {
    if (tls_aad_pending) {
      // A TLS record, whatever its outcome, ends with the IV finished. One
      // that succeeded set the tag length.
      tls_aad_pending = false;
      tls_aad_unsure = false;
      if (ok) {
        gcm_tag_len = GcmTagLen::kSet;
      } else if (gcm_tag_len == GcmTagLen::kUnset) {
        gcm_tag_len = GcmTagLen::kMaybe;
      }
      GcmNewIv(GcmIv::kFinished);
      return;
    }
    if (!gcm_key || gcm_iv == GcmIv::kFinished) return;
    if (gcm_iv == GcmIv::kUninitialised) {
      if (!enc || iv_len < 12) return;
      gcm_random_iv = true;
      gcm_iv = GcmIv::kBuffered;
    }
    if (gcm_iv == GcmIv::kBuffered) {
      gcm_iv = GcmIv::kCopied;
      gcm_tag_failed = false;
      GcmNewMessage();
    }
    if (call == GcmCall::kAad && ok && len != 0) {
      gcm_aad_split = gcm_aad_split || gcm_aad_padded;
      gcm_aad_len += len;
    } else if (call == GcmCall::kData && ok) {
      if (len == 0 && !gcm_payload && gcm_aad_len % 16 != 0) {
        gcm_aad_padded = true;
      }
      gcm_payload = gcm_payload || len != 0;
    }
    if (call != GcmCall::kFinish || (!enc && gcm_tag_len != GcmTagLen::kSet)) {
      return;
    }
    if (ok) {
      gcm_tag_differs = gcm_interrupted || gcm_tag_failed || gcm_random_iv ||
                        gcm_aad_split;
      if (enc) gcm_tag_len = GcmTagLen::kSet;
      gcm_iv = GcmIv::kFinished;
      gcm_interrupted = false;
      gcm_tag_failed = false;
    } else if (!enc) {
      gcm_tag_failed = true;
    }
  }
};

// Explicit-IV TLS versions: a CBC record starts with a block of IV.
inline bool HasExplicitIv(unsigned int version) {
  return version == TLS1_1_VERSION || version == TLS1_2_VERSION ||
         version == DTLS1_VERSION || version == DTLS1_2_VERSION ||
         version == DTLS1_BAD_VER;
}

// Whether a decrypted TLS CBC record (explicit IV included) has good
// padding for `mac_size`: otherwise each provider hands out a random MAC.
inline bool TlsPaddingGood(unsigned int version, const uint8_t *record, size_t len,
                    size_t mac_size) {
  size_t offset = HasExplicitIv(version) ? 16 : 0;
  if (len < offset) return false;
  record += offset;
  len -= offset;
  if (len == 0) return false;
  const size_t pad = record[len - 1];
  if (len < 1 + mac_size + pad) return false;
  if (version == SSL3_VERSION) return pad + 1 <= 16;
  for (size_t i = 0; i <= pad; ++i) {
    if (record[len - 1 - i] != pad) return false;
  }
  return true;
}

}  // namespace aesmux::fuzz

#endif  // AESMUX_TESTS_FUZZ_MODEL_H_
