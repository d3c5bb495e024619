// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support: two cipher contexts driven in lockstep through the same EVP
// calls, side [0] the implementation under test (aesmux's provider, or the
// aesmux ENGINE), side [1] OpenSSL's default provider, the reference; every
// call's outcome is compared, and the first difference fails the test with
// the whole call history.
//
// Used by the provider's and the ENGINE's differential tests, which differ
// in what they generate and in how much of an outcome must agree (Compare).
#ifndef AESMUX_TESTS_SUPPORT_EVP_TWIN_H_
#define AESMUX_TESTS_SUPPORT_EVP_TWIN_H_

#include <openssl/evp.h>
#include <openssl/types.h>  // ENGINE

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/provider/aligned_buffer.h"
#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

// What one call did on one side.
struct Observed {
  int ret = 0;
  int outl = 0;               // output length (IV length for the IV)
  Bytes bytes;                // output, IV or tag
  unsigned long error = 0;    // the last error on the queue after the call
  bool ok = false;            // whether the call succeeded
};

// How much of two sides' outcomes must agree.
enum class Compare {
  // Return value, output length, bytes, and the error's library and
  // reason: a provider against the default provider.
  kEverything,
  // Success and bytes only: a legacy ENGINE cipher returns 1 where a
  // provider returns a length, and raises its own errors.
  kOutcomeAndBytes,
};

std::string ErrorText(unsigned long error);
std::string Summary(const Observed &o);

// One side of a twin: its context and its own buffer, which holds the input
// and receives the output (the same region when in place).
struct Side {
  ENGINE *engine = nullptr;  // for a legacy ENGINE cipher, else null
  const EVP_CIPHER *cipher = nullptr;
  CipherCtxPtr ctx;
  AlignedBuffer buffer{0};
  size_t in_base = 0;
  size_t out_base = 0;
  size_t consumed = 0;  // input bytes taken
  size_t produced = 0;  // output bytes written
  size_t aad_consumed = 0;

  uint8_t *in() { return buffer.data() + in_base + consumed; }
  uint8_t *out() { return buffer.data() + out_base + produced; }
};

// The calls, each on one side. Data calls read the side's input at what it
// has consumed and write its output at what it has produced.
Observed Init(Side &s, bool with_cipher, const uint8_t *key, const uint8_t *iv,
              int enc);
Observed Ctrl(Side &s, int type, size_t arg, const void *ptr);
Observed SetPadding(Side &s, bool padding);
Observed Update(Side &s, size_t len);
// AAD from `aad` at what the side has consumed of it.
Observed UpdateAad(Side &s, const Bytes &aad, size_t len);
// EVP_Cipher() on data: a provider's returns the output length or -1; a
// legacy cipher's 1 or 0, unless it is `custom` (EVP_CIPH_FLAG_CUSTOM_CIPHER:
// the length or -1).
Observed Cipher(Side &s, size_t len, bool custom = false);
Observed CipherAad(Side &s, const Bytes &aad, size_t len);
Observed CipherFinal(Side &s);  // EVP_Cipher(ctx, NULL, NULL, 0)
Observed Final(Side &s);
Observed UpdatedIv(Side &s);    // EVP_CIPHER_CTX_get_updated_iv
Observed Num(Side &s);
Observed GetTag(Side &s, size_t len);

// Two sides driven in lockstep: [0] the one under test, [1] the reference.
class Twin {
 public:
  // `under_test` names side [0] in failure messages ("aesmux").
  Twin(std::array<Side, 2> sides, std::string scenario, std::string under_test,
       Compare compare)
      : sides_(std::move(sides)),
        scenario_(std::move(scenario)),
        under_test_(std::move(under_test)),
        compare_(compare) {}

  // Makes `call` on both sides and compares what they observed. Returns
  // whether it succeeded (on both: a difference is a test failure, and the
  // twin makes no further calls).
  template <typename Call>
  bool Step(const std::string &what, Call call) {
    if (diverged_) return false;
    std::array<Observed, 2> seen;
    for (size_t i = 0; i < 2; ++i) {
      ClearErrors();
      seen[i] = call(sides_[i]);
      seen[i].error = LastError();
      ClearErrors();
    }
    return Compared(what, seen);
  }

  // A step whose success or failure does not end the stream (a query):
  // false only once the sides differ.
  template <typename Call>
  bool Check(const std::string &what, Call call) {
    Step(what, call);
    return !diverged_;
  }

  // EVP_CIPHER_CTX_copy of both contexts, as a step; the copy carries on
  // with copies of the buffers.
  std::optional<Twin> Copy();

  // Starts the next message on the same contexts: input and output from
  // the start of the buffers again.
  void Rewind(const Bytes &input);

  Side &side(size_t i) { return sides_[i]; }
  bool diverged() const { return diverged_; }
  const std::string &last_call() const { return last_call_; }
  const Observed &last() const { return last_; }  // the reference's

  // The reference's output so far.
  Bytes Output();

 private:
  static void ClearErrors();
  static unsigned long LastError();
  bool Same(const Observed &a, const Observed &b) const;
  // Logs the step and fails the test if the sides differ; returns whether
  // the step succeeded.
  bool Compared(const std::string &what, const std::array<Observed, 2> &seen);

  std::array<Side, 2> sides_;
  std::string scenario_;
  std::string under_test_;
  Compare compare_;
  std::string log_;
  bool diverged_ = false;
  std::string last_call_;
  Observed last_;
};

// A twin over `input` (with room after it for a padding block and a final
// block), in place or out of place at the given misalignments. `contexts`
// may hold contexts to reuse; the missing ones are made.
struct TwinSpec {
  std::string under_test;  // side [0]'s name in messages
  Compare compare = Compare::kEverything;
  ENGINE *engine = nullptr;  // side [0]'s, for a legacy cipher
  std::array<const EVP_CIPHER *, 2> ciphers{};
};
Twin MakeTwin(const TwinSpec &spec, std::array<CipherCtxPtr, 2> contexts,
              const Bytes &input, bool in_place, size_t in_misalign,
              size_t out_misalign, std::string scenario);

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_EVP_TWIN_H_
