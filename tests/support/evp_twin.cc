// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/support/evp_twin.h"

#include <openssl/err.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace aesmux::test {
namespace {

// At most `max` bytes in hex, "…" when there are more.
std::string HexPrefix(const uint8_t *data, size_t len, size_t max = 32) {
  std::string text = ToHex(data, std::min(len, max));
  if (len > max) text += "…";
  return text;
}

std::string Describe(const std::string &name, const Observed &o) {
  std::ostringstream text;
  text << "  " << name << ": ret " << o.ret << ", outl " << o.outl << ", "
       << (o.ok ? "ok" : "failed") << ", " << o.bytes.size()
       << " bytes, error " << ErrorText(o.error) << "\n";
  return text.str();
}

// Both sides' outcomes, and where their bytes part.
std::string Difference(const std::string &under_test, const Observed &tested,
                       const Observed &ref) {
  std::string text =
      Describe(under_test, tested) + Describe("default provider", ref);
  if (tested.bytes != ref.bytes) {
    const size_t common = std::min(tested.bytes.size(), ref.bytes.size());
    size_t at = 0;
    while (at < common && tested.bytes[at] == ref.bytes[at]) ++at;
    const size_t from = at & ~size_t{15};
    auto tail = [from](const Bytes &b) {
      const size_t start = std::min(from, b.size());
      return HexPrefix(b.data() + start, b.size() - start);
    };
    text += "  bytes differ from offset " + std::to_string(at) + ":\n  " +
            under_test + " [" + std::to_string(from) + "..] " +
            tail(tested.bytes) + "\n  default provider [" +
            std::to_string(from) + "..] " + tail(ref.bytes) + "\n";
  }
  return text;
}

}  // namespace

std::string ErrorText(unsigned long error) {
  if (error == 0) return "none";
  const char *lib = ERR_lib_error_string(error);
  const char *reason = ERR_reason_error_string(error);
  return std::string(lib != nullptr ? lib : "?") + ": " +
         (reason != nullptr ? reason : "?") + " (reason " +
         std::to_string(ERR_GET_REASON(error)) + ")";
}

std::string Summary(const Observed &o) {
  std::string text =
      "ret " + std::to_string(o.ret) + ", outl " + std::to_string(o.outl);
  if (!o.bytes.empty() && o.bytes.size() <= 16) {
    text += ", " + ToHex(o.bytes);
  } else if (!o.bytes.empty()) {
    text += ", " + std::to_string(o.bytes.size()) + " bytes " +
            HexPrefix(o.bytes.data(), o.bytes.size());
  }
  if (o.error != 0) text += ", error " + ErrorText(o.error);
  return text;
}

Observed Init(Side &s, bool with_cipher, const uint8_t *key, const uint8_t *iv,
              int enc) {
  Observed o;
  o.ret = EVP_CipherInit_ex(s.ctx.get(), with_cipher ? s.cipher : nullptr,
                            with_cipher ? s.engine : nullptr, key, iv, enc);
  o.ok = o.ret == 1;
  return o;
}

Observed Ctrl(Side &s, int type, size_t arg, const void *ptr) {
  Observed o;
  o.ret = EVP_CIPHER_CTX_ctrl(s.ctx.get(), type, static_cast<int>(arg),
                              const_cast<void *>(ptr));
  o.ok = o.ret > 0;
  return o;
}

Observed SetPadding(Side &s, bool padding) {
  Observed o;
  o.ret = EVP_CIPHER_CTX_set_padding(s.ctx.get(), padding ? 1 : 0);
  o.ok = o.ret == 1;
  return o;
}

Observed Update(Side &s, size_t len) {
  Observed o;
  uint8_t *out = s.out();
  o.ret = EVP_CipherUpdate(s.ctx.get(), out, &o.outl, s.in(),
                           static_cast<int>(len));
  o.ok = o.ret == 1;
  if (o.ok) {
    o.bytes.assign(out, out + o.outl);
    s.consumed += len;
    s.produced += static_cast<size_t>(o.outl);
  }
  return o;
}

namespace {

// A non-null pointer for empty AAD: EVP_Cipher(ctx, NULL, NULL, 0) would
// mean final.
const uint8_t *AadAt(const Bytes &aad, size_t offset) {
  static const uint8_t kNothing = 0;
  return aad.empty() ? &kNothing : aad.data() + offset;
}

}  // namespace

Observed UpdateAad(Side &s, const Bytes &aad, size_t len) {
  Observed o;
  o.ret = EVP_CipherUpdate(s.ctx.get(), nullptr, &o.outl,
                           AadAt(aad, s.aad_consumed), static_cast<int>(len));
  o.ok = o.ret == 1;
  if (o.ok) s.aad_consumed += len;
  return o;
}

Observed Cipher(Side &s, size_t len, bool custom) {
  Observed o;
  uint8_t *out = s.out();
  o.ret = EVP_Cipher(s.ctx.get(), out, s.in(), static_cast<unsigned>(len));
  const bool returns_length = custom || s.engine == nullptr;
  o.ok = returns_length ? o.ret >= 0 : o.ret > 0;
  if (o.ok) {
    const size_t written = returns_length ? static_cast<size_t>(o.ret) : len;
    o.bytes.assign(out, out + written);
    s.consumed += len;
    s.produced += written;
  }
  return o;
}

Observed CipherAad(Side &s, const Bytes &aad, size_t len) {
  Observed o;
  o.ret = EVP_Cipher(s.ctx.get(), nullptr, AadAt(aad, s.aad_consumed),
                     static_cast<unsigned>(len));
  o.ok = o.ret >= 0;
  if (o.ok) s.aad_consumed += len;
  return o;
}

Observed CipherFinal(Side &s) {
  Observed o;
  o.ret = EVP_Cipher(s.ctx.get(), nullptr, nullptr, 0);
  o.ok = o.ret >= 0;
  return o;
}

Observed Final(Side &s) {
  Observed o;
  uint8_t *out = s.out();
  o.ret = EVP_CipherFinal_ex(s.ctx.get(), out, &o.outl);
  o.ok = o.ret == 1;
  if (o.ok) {
    o.bytes.assign(out, out + o.outl);
    s.produced += static_cast<size_t>(o.outl);
  }
  return o;
}

Observed UpdatedIv(Side &s) {
  Observed o;
  uint8_t iv[128];  // GCM IVs may exceed EVP_MAX_IV_LENGTH
  o.ret = EVP_CIPHER_CTX_get_updated_iv(s.ctx.get(), iv, sizeof(iv));
  o.outl = EVP_CIPHER_CTX_get_iv_length(s.ctx.get());
  o.ok = o.ret == 1;
  if (o.ok && o.outl > 0 && o.outl <= static_cast<int>(sizeof(iv))) {
    o.bytes.assign(iv, iv + o.outl);
  }
  return o;
}

Observed Num(Side &s) {
  Observed o;
  o.ret = EVP_CIPHER_CTX_get_num(s.ctx.get());
  o.ok = o.ret >= 0;
  // In the bytes too, so that Compare::kOutcomeAndBytes compares it.
  if (o.ok) o.bytes.push_back(static_cast<uint8_t>(o.ret));
  return o;
}

Observed GetTag(Side &s, size_t len) {
  Observed o;
  uint8_t tag[16] = {};
  o.ret = EVP_CIPHER_CTX_ctrl(s.ctx.get(), EVP_CTRL_AEAD_GET_TAG,
                              static_cast<int>(len), tag);
  o.ok = o.ret > 0;
  if (o.ok) o.bytes.assign(tag, tag + std::min(len, sizeof(tag)));
  return o;
}

void Twin::ClearErrors() { ERR_clear_error(); }

unsigned long Twin::LastError() { return ERR_peek_last_error(); }

bool Twin::Same(const Observed &a, const Observed &b) const {
  if (a.ok != b.ok || a.bytes != b.bytes) return false;
  return compare_ == Compare::kOutcomeAndBytes ||
         (a.ret == b.ret && a.outl == b.outl &&
          ERR_GET_LIB(a.error) == ERR_GET_LIB(b.error) &&
          ERR_GET_REASON(a.error) == ERR_GET_REASON(b.error));
}

bool Twin::Compared(const std::string &what,
                    const std::array<Observed, 2> &seen) {
  log_ += "  " + what + ": " + Summary(seen[1]) + "\n";
  last_call_ = what;
  last_ = seen[1];
  if (Same(seen[0], seen[1])) return seen[1].ok;
  diverged_ = true;
  ADD_FAILURE() << under_test_ << " and the default provider differ at "
                << what << "\n"
                << Difference(under_test_, seen[0], seen[1])
                << "scenario: " << scenario_
                << "\ncalls (with the default provider's results):\n"
                << log_;
  return false;
}

std::optional<Twin> Twin::Copy() {
  std::array<CipherCtxPtr, 2> copies;
  if (!Step("EVP_CIPHER_CTX_copy", [&](Side &s) {
        Observed o;
        CipherCtxPtr copy = NewCipherCtx();
        o.ret = EVP_CIPHER_CTX_copy(copy.get(), s.ctx.get());
        o.ok = o.ret == 1;
        copies[&s - sides_.data()] = std::move(copy);
        return o;
      })) {
    return std::nullopt;
  }
  std::array<Side, 2> sides;
  for (size_t i = 0; i < 2; ++i) {
    const Side &from = sides_[i];
    sides[i] = Side{from.engine,   from.cipher,   std::move(copies[i]),
                    from.buffer,   from.in_base,  from.out_base,
                    from.consumed, from.produced, from.aad_consumed};
  }
  Twin copy(std::move(sides), scenario_ + " [the copy]", under_test_,
            compare_);
  copy.log_ = log_ + "  -- the copy continues --\n";
  return copy;
}

void Twin::Rewind(const Bytes &input) {
  for (Side &s : sides_) {
    s.consumed = s.produced = s.aad_consumed = 0;
    std::copy(input.begin(), input.end(), s.buffer.data() + s.in_base);
  }
}

Bytes Twin::Output() {
  Side &ref = sides_[1];
  const uint8_t *out = ref.buffer.data() + ref.out_base;
  return {out, out + ref.produced};
}

Twin MakeTwin(const TwinSpec &spec, std::array<CipherCtxPtr, 2> contexts,
              const Bytes &input, bool in_place, size_t in_misalign,
              size_t out_misalign, std::string scenario) {
  constexpr size_t kBlock = 16;
  const size_t room = input.size() + 2 * kBlock;
  std::array<Side, 2> sides;
  for (size_t i = 0; i < 2; ++i) {
    Side &s = sides[i];
    s.engine = i == 0 ? spec.engine : nullptr;
    s.cipher = spec.ciphers[i];
    s.ctx = contexts[i] ? std::move(contexts[i]) : NewCipherCtx();
    if (in_place) {
      s.in_base = s.out_base = out_misalign;
      s.buffer = AlignedBuffer(out_misalign + room);
    } else {
      s.in_base = in_misalign;
      const size_t out_start =
          (in_misalign + input.size() + AlignedBuffer::kAlignment - 1) /
          AlignedBuffer::kAlignment * AlignedBuffer::kAlignment;
      s.out_base = out_start + out_misalign;
      s.buffer = AlignedBuffer(s.out_base + room);
    }
    std::copy(input.begin(), input.end(), s.buffer.data() + s.in_base);
  }
  return Twin(std::move(sides), std::move(scenario), spec.under_test,
              spec.compare);
}

}  // namespace aesmux::test
