// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AES-ECB and AES-CBC: whole blocks, PKCS#7 padding, partial blocks held
// between updates (and, when decrypting with padding, the last full block
// held back for final), exactly as the default provider's block ciphers.
#include <openssl/core_dispatch.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/proverr.h>

#include <cstring>

#include "provider/openssl/dispatch.h"
#include "provider/openssl/generic_ctx.h"
#include "provider/openssl/tls_cbc.h"

namespace aesmux::openssl {
namespace {

using core::Alg;
using core::Family;
using core::Segment;

// Runs whole blocks through the router; raises CIPHER_OPERATION_FAILED when
// no path could serve them.
inline bool RunBlocks(GenericCtx *ctx, std::span<const Segment> segments) {
  uint8_t *iv = ctx->family == Family::kCbc ? ctx->iv : nullptr;
  if (ctx->engine.Run(ctx->direction(), iv, segments)) return true;
  size_t len = 0;
  for (const Segment &segment : segments) len += segment.len;
  RaiseNoPathServed(ctx, len);
  return false;
}

// PKCS#7 removal from the final decrypted block, without branching on the
// padding bytes. Returns the number of plaintext bytes, or -1 if the padding
// is malformed.
int UnpadLength(const uint8_t block[kAesBlock]) {
  const unsigned pad = block[kAesBlock - 1];
  // bad = pad == 0 || pad > 16, as an all-ones mask.
  unsigned bad = (0u - ((pad - 1) >> 31)) | (0u - ((16u - pad) >> 31));
  for (unsigned i = 0; i < kAesBlock; ++i) {
    // in_pad: byte i lies in the last `pad` bytes.
    const unsigned in_pad = 0u - (((kAesBlock - 1 - i) - pad) >> 31);
    bad |= in_pad & (0u - ((block[i] ^ pad) != 0));
  }
  return bad ? -1 : static_cast<int>(kAesBlock - pad);
}

// TLS record mode: each update is one whole record, in place. Encrypting
// pads it; decrypting strips explicit IV, padding and MAC in constant time
// and keeps the MAC for tls-mac.
int TlsRecordUpdate(GenericCtx *ctx, unsigned char *out, size_t *outl,
                    size_t outsize, const unsigned char *in, size_t inl) {
  if (in == nullptr || in != out || outsize < inl || !ctx->pad) {
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return 0;
  }
  if (ctx->encrypt) {
    if (outsize < inl + kAesBlock - inl % kAesBlock) {
      ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
      return 0;
    }
    inl = TlsPad(ctx->tls->version, out, inl);
  }
  if (inl % kAesBlock != 0) {
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return 0;
  }
  const Segment segment{out, out, inl};
  if (!RunBlocks(ctx, std::span(&segment, 1))) return 0;
  // The previous record's MAC is gone (the default provider frees it here).
  GenericCtx::Tls &tls = *ctx->tls;  // made when tls-version was set
  tls.mac_held = false;
  tls.mac_out = nullptr;
  *outl = inl;
  if (ctx->encrypt) return 1;

  uint8_t random_mac[kMaxTlsMacSize];
  TlsRecordLayout layout;
  if (tls.mac_size > kMaxTlsMacSize ||
      (tls.mac_size != 0 &&
       !ctx->provider->fallback->RandomBytes(random_mac,
                                             tls.mac_size)) ||
      !TlsRemovePaddingAndMac(tls.version, {out, inl}, tls.mac_size,
                              random_mac, tls.mac, &layout)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return 0;
  }
  tls.mac_held = tls.mac_size != 0;
  *outl = layout.payload_len;
  return 1;
}

// Everything but BlockUpdate's common case: no key, TLS records, partial
// blocks held between updates, the last block held back when decrypting
// with padding. Out of line, so the common case's function stays small.
[[gnu::noinline]] int BlockUpdateGeneral(GenericCtx *ctx, unsigned char *out,
                                         size_t *outl, size_t outsize,
                                         const unsigned char *in, size_t inl) {
  if (!ctx->key_set) {
    ERR_raise(ERR_LIB_PROV, PROV_R_NO_KEY_SET);
    return 0;
  }
  if (ctx->tls_version() > 0) {
    return TlsRecordUpdate(ctx, out, outl, outsize, in, inl);
  }

  // Complete a held partial block first (an empty update may come with
  // no input at all).
  if (ctx->buf_len != 0 && inl != 0) {
    const size_t take = std::min(inl, kAesBlock - ctx->buf_len);
    std::memcpy(ctx->buf + ctx->buf_len, in, take);
    ctx->buf_len = static_cast<uint8_t>(ctx->buf_len + take);
    in += take;
    inl -= take;
  }
  Segment segments[2];
  size_t num_segments = 0;
  size_t produced = 0;
  // A full held block goes now, unless it may be the padded last block of a
  // decryption (no more input yet).
  const bool flush_held = ctx->buf_len == kAesBlock &&
                          (ctx->encrypt || inl > 0 || !ctx->pad);
  if (flush_held) {
    if (outsize < kAesBlock) {
      ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
      return 0;
    }
    segments[num_segments++] = {out, ctx->buf, kAesBlock};
    produced = kAesBlock;
  }
  size_t whole = inl & ~(kAesBlock - 1);
  // Decrypting with padding: hold back the last block for final.
  if (whole != 0 && whole == inl && !ctx->encrypt && ctx->pad) {
    whole -= kAesBlock;
  }
  if (whole != 0 && outsize < produced + whole) {
    ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
    return 0;
  }
  // In place (or overlapping) after a partial block: the held block's
  // output would overwrite input not read yet, and each output block the
  // start of the next input block (OpenSSL's default provider does so, and
  // returns garbage). Keep what will be held, move the whole blocks to
  // where their output goes and run them in place there, and write the held
  // block's output last. (docs/differences.md.)
  uint8_t held_out[kAesBlock] = {};  // written by RunBlocks below
  uint8_t rest[kAesBlock];
  const size_t rest_len = inl - whole;
  const bool overlapping =
      flush_held && out < in + inl && in < out + kAesBlock + whole;
  if (overlapping) {
    std::memcpy(rest, in + whole, rest_len);
    if (whole != 0) std::memmove(out + kAesBlock, in, whole);
    segments[0].out = held_out;
    in = out + kAesBlock;
  }
  if (whole != 0) segments[num_segments++] = {out + produced, in, whole};
  if (num_segments != 0 &&
      !RunBlocks(ctx, std::span(segments, num_segments))) {
    return 0;
  }
  if (overlapping) {
    std::memcpy(out, held_out, kAesBlock);
    OPENSSL_cleanse(held_out, sizeof(held_out));
  }
  if (flush_held) ctx->buf_len = 0;
  // What is left is less than a block (or the block held back): hold it.
  if (rest_len != 0) {
    std::memcpy(ctx->buf + ctx->buf_len, overlapping ? rest : in + whole,
                rest_len);
    ctx->buf_len = static_cast<uint8_t>(ctx->buf_len + rest_len);
  }
  if (overlapping) OPENSSL_cleanse(rest, sizeof(rest));
  *outl = produced + whole;
  return 1;
}

// A padded decryption's update of whole blocks with nothing held or one
// whole block held: its own last block is held back in turn, for final
// (the common shape of every update of a padded decryption). The other
// shapes, and output that overlaps the input after a held block, take
// BlockUpdateGeneral.
[[gnu::noinline]] int HeldBackUpdate(GenericCtx *ctx, unsigned char *out,
                                     size_t *outl, size_t outsize,
                                     const unsigned char *in, size_t inl) {
  const size_t held = ctx->buf_len;  // 0 or one block
  const size_t produced = held + inl - kAesBlock;
  const size_t whole = inl - kAesBlock;
  if (outsize < produced ||
      (held != 0 && out < in + inl && in < out + produced)) {
    return BlockUpdateGeneral(ctx, out, outl, outsize, in, inl);
  }
  uint8_t *iv = ctx->family == Family::kCbc ? ctx->iv : nullptr;
  if (held != 0) {
    if (!ctx->engine.RunHeldAndWholeBlocks(iv, out, ctx->buf, in, whole)) {
      RaiseNoPathServed(ctx, produced);
      return 0;
    }
  } else if (whole != 0 && !ctx->engine.RunWholeBlocks(
                               core::Direction::kDecrypt, iv, out, in, whole)) {
    RaiseNoPathServed(ctx, whole);
    return 0;
  }
  std::memcpy(ctx->buf, in + whole, kAesBlock);
  ctx->buf_len = kAesBlock;
  *outl = produced;
  return 1;
}

// The common case first, kept short for small requests: nothing held,
// whole blocks in, and no block to hold back.
int BlockUpdate(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                const unsigned char *in, size_t inl) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (ctx->key_set && ctx->tls_version() == 0 && ctx->buf_len == 0 &&
      (inl & (kAesBlock - 1)) == 0 && inl != 0 && outsize >= inl &&
      (ctx->encrypt || !ctx->pad)) {
    uint8_t *iv = ctx->family == Family::kCbc ? ctx->iv : nullptr;
    if (!ctx->engine.RunWholeBlocks(ctx->direction(), iv, out, in, inl)) {
      RaiseNoPathServed(ctx, inl);
      return 0;
    }
    *outl = inl;
    return 1;
  }
  if (ctx->key_set && ctx->tls_version() == 0 && !ctx->encrypt &&
      ctx->pad && (ctx->buf_len == 0 || ctx->buf_len == kAesBlock) &&
      (inl & (kAesBlock - 1)) == 0 && inl != 0) {
    return HeldBackUpdate(ctx, out, outl, outsize, in, inl);
  }
  return BlockUpdateGeneral(ctx, out, outl, outsize, in, inl);
}

int BlockFinal(void *vctx, unsigned char *out, size_t *outl,
               size_t outsize) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (!ctx->key_set) {
    ERR_raise(ERR_LIB_PROV, PROV_R_NO_KEY_SET);
    return 0;
  }
  if (ctx->tls_version() > 0) {
    // TLS records are never finalised.
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return 0;
  }
  if (ctx->encrypt) {
    if (ctx->pad) {
      const auto pad = static_cast<uint8_t>(kAesBlock - ctx->buf_len);
      std::memset(ctx->buf + ctx->buf_len, pad, pad);
    } else if (ctx->buf_len == 0) {
      *outl = 0;
      return 1;
    } else if (ctx->buf_len != kAesBlock) {
      ERR_raise(ERR_LIB_PROV, PROV_R_WRONG_FINAL_BLOCK_LENGTH);
      return 0;
    }
    if (outsize < kAesBlock) {
      ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
      return 0;
    }
    const Segment segment{out, ctx->buf, kAesBlock};
    if (!RunBlocks(ctx, std::span(&segment, 1))) return 0;
    ctx->buf_len = 0;
    *outl = kAesBlock;
    return 1;
  }

  if (ctx->buf_len != kAesBlock) {
    if (ctx->buf_len == 0 && !ctx->pad) {
      *outl = 0;
      return 1;
    }
    ERR_raise(ERR_LIB_PROV, PROV_R_WRONG_FINAL_BLOCK_LENGTH);
    return 0;
  }
  const Segment segment{ctx->buf, ctx->buf, kAesBlock};
  if (!RunBlocks(ctx, std::span(&segment, 1))) return 0;
  size_t plain_len = kAesBlock;
  if (ctx->pad) {
    const int unpadded = UnpadLength(ctx->buf);
    if (unpadded < 0) {
      ERR_raise(ERR_LIB_PROV, PROV_R_BAD_DECRYPT);
      return 0;
    }
    plain_len = static_cast<size_t>(unpadded);
  }
  if (outsize < plain_len) {
    ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
    return 0;
  }
  std::memcpy(out, ctx->buf, plain_len);
  OPENSSL_cleanse(ctx->buf, sizeof(ctx->buf));
  ctx->buf_len = 0;
  *outl = plain_len;
  return 1;
}

// EVP_Cipher(): no buffering and no padding; `inl` bytes in, `inl` reported
// out. A trailing partial block is handled as the default provider's AES-NI
// code does: ECB leaves it untouched; CBC encryption encrypts it zero-padded
// (writing a whole block, which EVP_Cipher's output size allows); CBC
// decryption decrypts it as if zero-extended and writes only its bytes.
int BlockCipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                const unsigned char *in, size_t inl) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (!ctx->key_set) {
    ERR_raise(ERR_LIB_PROV, PROV_R_NO_KEY_SET);
    return 0;
  }
  if (outsize < inl) {
    ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
    return 0;
  }
  const size_t whole = inl & ~(kAesBlock - 1);
  const size_t tail = inl - whole;
  Segment segments[2];
  size_t num_segments = 0;
  if (whole != 0) segments[num_segments++] = {out, in, whole};
  uint8_t block[kAesBlock] = {};
  uint8_t decrypted[kAesBlock];
  if (tail != 0 && ctx->family == Family::kCbc) {
    if (ctx->encrypt && outsize < whole + kAesBlock) {
      ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
      return 0;
    }
    std::memcpy(block, in + whole, tail);
    segments[num_segments++] = {ctx->encrypt ? out + whole : decrypted, block,
                                kAesBlock};
  }
  if (num_segments != 0 &&
      !RunBlocks(ctx, std::span(segments, num_segments))) {
    return 0;
  }
  if (tail != 0 && ctx->family == Family::kCbc && !ctx->encrypt) {
    std::memcpy(out + whole, decrypted, tail);
    OPENSSL_cleanse(decrypted, sizeof(decrypted));
  }
  OPENSSL_cleanse(block, sizeof(block));
  *outl = inl;
  return 1;
}

// OpenSSL 3.5's cipher pipeline API for CBC encryption: `numpipes`
// independent streams under one key, each with its own IV, encrypted
// together in multi-buffer lanes. Each update takes whole blocks per pipe;
// with padding on, final adds one padding block per pipe. Compiled on every
// build (dispatch.h defines the ids older headers lack); OpenSSL 3.0 never
// calls it, the tests call it through the dispatch table.
constexpr size_t kMaxPipes = 32;  // EVP_MAX_PIPES

int PipelineEncryptInit(void *vctx, const unsigned char *key, size_t key_len,
                        size_t numpipes, const unsigned char **iv,
                        size_t iv_len, const OSSL_PARAM params[]) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (numpipes == 0 || numpipes > kMaxPipes) {
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return 0;
  }
  if (!ctx->pipes) {
    if (ctx->pipes.GetOrMake() == nullptr) {
      ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
      return 0;
    }
  }
  if (iv != nullptr) {
    if (iv_len != kAesBlock) {
      ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_IV_LENGTH);
      return 0;
    }
    for (size_t i = 0; i < numpipes; ++i) {
      if (iv[i] == nullptr) {
        ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_IV_LENGTH);
        return 0;
      }
      std::memcpy(ctx->pipes->iv[i], iv[i], kAesBlock);
    }
  }
  ctx->pipes->count = numpipes;
  if (key != nullptr && !SetInitKey(ctx, key, key_len)) return 0;
  ctx->encrypt = true;
  return GenericSetCtxParams(ctx, params);
}

// Runs one whole-block request per pipe; `in[i]` may be the padding block.
int RunPipes(GenericCtx *ctx, size_t numpipes, unsigned char **out,
             const unsigned char *const *in, const size_t *len) {
  route::PipeRequest requests[kMaxPipes];
  for (size_t i = 0; i < numpipes; ++i) {
    requests[i] = {ctx->pipes->iv[i], out[i], in[i], len[i]};
  }
  if (!ctx->engine.RunCbcEncryptPipes(std::span(requests, numpipes))) {
    RaiseNoPathServed(ctx, 0);
    return 0;
  }
  return 1;
}

bool CheckPipes(const GenericCtx *ctx, size_t numpipes) {
  if (!ctx->key_set) {
    ERR_raise(ERR_LIB_PROV, PROV_R_NO_KEY_SET);
    return false;
  }
  if (!ctx->pipes || numpipes != ctx->pipes->count) {
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return false;
  }
  return true;
}

int PipelineUpdate(void *vctx, size_t numpipes, unsigned char **out,
                   size_t *outl, const size_t *outsize,
                   const unsigned char **in, const size_t *inl) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (!CheckPipes(ctx, numpipes)) return 0;
  for (size_t i = 0; i < numpipes; ++i) {
    if (inl[i] % kAesBlock != 0) {
      ERR_raise(ERR_LIB_PROV, PROV_R_WRONG_FINAL_BLOCK_LENGTH);
      return 0;
    }
    if (outsize[i] < inl[i]) {
      ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
      return 0;
    }
  }
  if (!RunPipes(ctx, numpipes, out, in, inl)) return 0;
  for (size_t i = 0; i < numpipes; ++i) outl[i] = inl[i];
  return 1;
}

int PipelineFinal(void *vctx, size_t numpipes, unsigned char **out,
                  size_t *outl, const size_t *outsize) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (!CheckPipes(ctx, numpipes)) return 0;
  if (!ctx->pad) {
    for (size_t i = 0; i < numpipes; ++i) outl[i] = 0;
    return 1;
  }
  // Every pipe ends on a block boundary: PKCS#7 adds a whole block of 16.
  static constexpr uint8_t kPadding[kAesBlock] = {
      16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16};
  const unsigned char *in[kMaxPipes] = {};
  size_t len[kMaxPipes] = {};
  for (size_t i = 0; i < numpipes; ++i) {
    if (outsize[i] < kAesBlock) {
      ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
      return 0;
    }
    in[i] = kPadding;
    len[i] = kAesBlock;
  }
  if (!RunPipes(ctx, numpipes, out, in, len)) return 0;
  for (size_t i = 0; i < numpipes; ++i) outl[i] = kAesBlock;
  return 1;
}

struct BlockFamily : GenericFamily {
  static constexpr auto Update = BlockUpdate;
  static constexpr auto Final = BlockFinal;
  static constexpr auto Cipher = BlockCipher;
  static constexpr auto PipelineEncryptInit = openssl::PipelineEncryptInit;
  static constexpr auto PipelineUpdate = openssl::PipelineUpdate;
  static constexpr auto PipelineFinal = openssl::PipelineFinal;
};

}  // namespace

const OSSL_DISPATCH *BlockDispatch(Alg alg) {
  // CBC encryption can also pipeline (OpenSSL 3.5+).
  return core::Info(alg).family == Family::kCbc
             ? FamilyDispatch<Family::kCbc, BlockFamily, Pipeline::kYes>(alg)
             : FamilyDispatch<Family::kEcb, BlockFamily>(alg);
}

}  // namespace aesmux::openssl
