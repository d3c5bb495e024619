// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// TLS record modes against the default provider, driven exactly as libssl
// and OpenSSH drive them: CBC records with tls-version / tls-mac-size for
// every protocol version (good, bad-padding, tampered and too-short
// records), TLS 1.2 GCM records with tlsaad / tlsivfixed, and OpenSSH's
// GCM packet sequence with tlsivgen.
#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/prov_ssl.h>

#include <cstring>
#include <random>
#include <string>

#include "tests/support/bytes.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

class TlsRecordTest : public KernelConfigTest {
 protected:
  // Initialises one context per provider, as libssl does for CBC suites.
  void InitCbc(const char *name, int enc, int version, size_t mac_size,
               const Bytes &key, const Bytes &iv) {
    CipherPtr ciphers[2] = {env_->Aesmux(name), env_->Default(name)};
    for (int i = 0; i < 2; ++i) {
      ctx_[i] = NewCipherCtx();
      ASSERT_TRUE(EVP_CipherInit_ex2(ctx_[i].get(), ciphers[i].get(),
                                     key.data(), iv.data(), enc, nullptr));
      OSSL_PARAM params[] = {
          OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_TLS_VERSION, &version),
          OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE,
                                      &mac_size),
          OSSL_PARAM_construct_end()};
      ASSERT_TRUE(EVP_CIPHER_CTX_set_params(ctx_[i].get(), params));
    }
  }

  // Runs one in-place update on both; returns the two results.
  struct Result {
    int ok;
    int out_len;
    Bytes data;
    Bytes mac;
  };
  Result Update(int side, Bytes record, size_t mac_size) {
    Result r;
    record.resize(record.size() + 16);
    r.ok = EVP_CipherUpdate(ctx_[side].get(), record.data(), &r.out_len,
                            record.data(), static_cast<int>(record.size() - 16));
    r.data = record;
    if (r.ok && mac_size != 0 && !EVP_CIPHER_CTX_is_encrypting(ctx_[side].get())) {
      unsigned char *mac = nullptr;
      OSSL_PARAM params[] = {
          OSSL_PARAM_construct_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC,
                                         reinterpret_cast<void **>(&mac),
                                         mac_size),
          OSSL_PARAM_construct_end()};
      EXPECT_TRUE(EVP_CIPHER_CTX_get_params(ctx_[side].get(), params));
      if (mac != nullptr) r.mac.assign(mac, mac + mac_size);
    }
    ERR_clear_error();
    return r;
  }

  CipherCtxPtr ctx_[2];
  std::mt19937_64 rng_{0x715};
};

constexpr int kVersions[] = {SSL3_VERSION,   TLS1_VERSION,    TLS1_1_VERSION,
                             TLS1_2_VERSION, DTLS1_VERSION,   DTLS1_2_VERSION,
                             DTLS1_BAD_VER};
constexpr size_t kMacSizes[] = {0, 20, 32, 48};

TEST_P(TlsRecordTest, CbcRecordsRoundTripLikeTheDefaultProvider) {
  for (const char *name : {"AES-128-CBC", "AES-256-CBC"}) {
    for (int version : kVersions) {
      for (size_t mac_size : kMacSizes) {
        SCOPED_TRACE(testing::Message() << name << " version " << std::hex
                                        << version << std::dec << " mac "
                                        << mac_size);
        const Bytes key = RandomBytes(rng_, std::strcmp(name, "AES-128-CBC") ? 32 : 16);
        const Bytes iv = RandomBytes(rng_, 16);
        // Several records per connection: the CBC state carries over.
        InitCbc(name, 1, version, mac_size, key, iv);
        std::vector<Bytes> sealed;
        for (size_t payload : {size_t{0}, size_t{1}, size_t{15}, size_t{16},
                               size_t{100}, size_t{1000}}) {
          // explicit IV (TLS 1.1+) ‖ payload ‖ MAC, as libssl lays it out
          Bytes record = RandomBytes(rng_, 16 + payload + mac_size);
          Result ours = Update(0, record, mac_size);
          Result theirs = Update(1, record, mac_size);
          ASSERT_EQ(ours.ok, 1);
          ASSERT_EQ(theirs.ok, 1);
          EXPECT_EQ(ours.out_len, theirs.out_len);
          EXPECT_EQ(ToHex(ours.data), ToHex(theirs.data));
          sealed.push_back(Bytes(ours.data.begin(),
                                 ours.data.begin() + ours.out_len));
        }
        InitCbc(name, 0, version, mac_size, key, iv);
        for (const Bytes &record : sealed) {
          Result ours = Update(0, record, mac_size);
          Result theirs = Update(1, record, mac_size);
          ASSERT_EQ(ours.ok, 1);
          ASSERT_EQ(theirs.ok, 1);
          EXPECT_EQ(ours.out_len, theirs.out_len);
          EXPECT_EQ(ToHex(ours.mac), ToHex(theirs.mac));
          // The whole buffer: explicit IV, payload, MAC, padding and the
          // bytes after the record.
          EXPECT_EQ(ToHex(ours.data), ToHex(theirs.data));
        }
      }
    }
  }
}

// Records whose padding is wrong, whose length is not a block multiple, or
// which are too short for IV and MAC: both providers must agree on the
// outcome; with a MAC, bad padding succeeds with a random MAC of the right
// length (libssl's MAC check then fails), without one it fails.
TEST_P(TlsRecordTest, BadCbcRecordsFailLikeTheDefaultProvider) {
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  CipherPtr plain_cbc = env_->Default("AES-128-CBC");
  for (int version : kVersions) {
    for (size_t mac_size : kMacSizes) {
      SCOPED_TRACE(testing::Message() << "version " << std::hex << version
                                      << std::dec << " mac " << mac_size);
      for (int trial = 0; trial < 40; ++trial) {
        // A decrypted record of random length with a random last byte and
        // sometimes an almost-correct padding run.
        const size_t blocks = 1 + rng_() % 20;
        Bytes plain = RandomBytes(rng_, blocks * 16);
        const uint8_t pad = static_cast<uint8_t>(rng_() % 256);
        plain.back() = pad;
        for (size_t i = 1; i <= pad && i < plain.size(); ++i) {
          plain[plain.size() - 1 - i] = trial % 3 == 0 ? pad ^ 1 : pad;
        }
        if (trial % 3 == 2 && pad != 0 && pad < plain.size()) {
          // One padding byte off by a random non-zero difference, or in
          // its top bit only.
          plain[plain.size() - 1 - (1 + rng_() % pad)] ^=
              trial % 2 ? 0x80 : static_cast<uint8_t>(1 + rng_() % 255);
        }
        // Encrypt it raw, so any padding reaches the TLS decrypt.
        auto raw = NewCipherCtx();
        Bytes record(plain.size() + 16);
        int len = 0;
        ASSERT_TRUE(EVP_EncryptInit_ex2(raw.get(), plain_cbc.get(), key.data(),
                                        iv.data(), nullptr));
        EVP_CIPHER_CTX_set_padding(raw.get(), 0);
        ASSERT_TRUE(EVP_EncryptUpdate(raw.get(), record.data(), &len,
                                      plain.data(), plain.size()));
        record.resize(len);
        if (trial % 7 == 6) record.resize(record.size() - 5);  // not blocks

        InitCbc("AES-128-CBC", 0, version, mac_size, key, iv);
        Result ours = Update(0, record, mac_size);
        Result theirs = Update(1, record, mac_size);
        ASSERT_EQ(ours.ok, theirs.ok) << "record " << ToHex(plain);
        // The whole buffer, decrypted in place whatever the outcome.
        EXPECT_EQ(ToHex(ours.data), ToHex(theirs.data));
        if (!ours.ok) continue;
        EXPECT_EQ(ours.out_len, theirs.out_len);
        // With bad padding each provider hands out a random MAC of the
        // right length.
        EXPECT_EQ(ours.mac.size(), theirs.mac.size());
      }
    }
  }
}

// A decrypted TLS 1.1+ CBC record of 0 bytes (no room for its explicit
// IV) fails. The default provider is not asked: its length underflows and
// it reads in front of the buffer (docs/differences.md).
TEST_P(TlsRecordTest, AnEmptyExplicitIvCbcRecordFails) {
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  for (int version : {TLS1_1_VERSION, TLS1_2_VERSION, DTLS1_2_VERSION}) {
    for (size_t mac_size : {size_t{0}, size_t{20}}) {
      SCOPED_TRACE(testing::Message() << "version " << std::hex << version
                                      << std::dec << " mac " << mac_size);
      InitCbc("AES-128-CBC", 0, version, mac_size, key, iv);
      const Result ours = Update(0, Bytes{}, mac_size);
      EXPECT_FALSE(ours.ok);
      EXPECT_EQ(ToHex(ours.data), ToHex(Bytes(16, 0)));
    }
  }
}

// tls-mac as the default provider answers it: no MAC before a record has
// brought one, the record's MAC after it, and never a pointer with a length
// beyond the MAC held (a caller reading tls-mac-size bytes would read past
// it): raising tls-mac-size after the record gives a null pointer in
// aesmux, where the default provider hands out its 20-byte copy with the new
// size. A tls-mac-size above 64 bytes fails the next record on both.
TEST_P(TlsRecordTest, TlsMacIsOnlyTheMacOfTheLastRecord) {
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  constexpr size_t kMac = 20;
  InitCbc("AES-128-CBC", 1, TLS1_2_VERSION, kMac, key, iv);
  const Bytes record = RandomBytes(rng_, 16 + 100 + kMac);
  Result sealed = Update(1, record, kMac);
  ASSERT_EQ(sealed.ok, 1);
  sealed.data.resize(sealed.out_len);

  InitCbc("AES-128-CBC", 0, TLS1_2_VERSION, kMac, key, iv);
  auto get_mac = [&](int side, size_t *size) {
    unsigned char *mac = reinterpret_cast<unsigned char *>(1);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC,
                                       reinterpret_cast<void **>(&mac), 0),
        OSSL_PARAM_construct_end()};
    EXPECT_TRUE(EVP_CIPHER_CTX_get_params(ctx_[side].get(), params));
    *size = params[0].return_size;
    return mac;
  };
  auto set_mac_size = [&](int side, size_t size) {
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &size),
        OSSL_PARAM_construct_end()};
    EXPECT_TRUE(EVP_CIPHER_CTX_set_params(ctx_[side].get(), params));
  };
  size_t sizes[2];
  for (int side = 0; side < 2; ++side) {
    SCOPED_TRACE(side == 0 ? "aesmux, before a record" : "default, before");
    EXPECT_EQ(get_mac(side, &sizes[side]), nullptr);
    EXPECT_EQ(sizes[side], kMac);
  }

  Result opened[2] = {Update(0, sealed.data, kMac), Update(1, sealed.data, kMac)};
  ASSERT_EQ(opened[0].ok, 1);
  ASSERT_EQ(opened[1].ok, 1);
  EXPECT_EQ(ToHex(opened[0].mac), ToHex(opened[1].mac));
  EXPECT_EQ(ToHex(opened[0].mac), ToHex(record.data() + 116, kMac));

  for (int side = 0; side < 2; ++side) set_mac_size(side, 1000);
  const unsigned char *ours = get_mac(0, &sizes[0]);
  const unsigned char *theirs = get_mac(1, &sizes[1]);
  EXPECT_NE(theirs, nullptr);
  EXPECT_EQ(ours, nullptr) << "aesmux offers its MAC with tls-mac-size 1000";
  EXPECT_EQ(sizes[0], sizes[1]);

  // No record can carry a MAC that large: it fails and leaves no MAC.
  for (int side = 0; side < 2; ++side) {
    Result r = Update(side, sealed.data, 0);
    EXPECT_EQ(r.ok, 0);
    EXPECT_EQ(get_mac(side, &sizes[side]), nullptr);
  }
}

// TLS mode on a stream cipher (CTR), as the default provider's generic
// stream update has it: decrypting hands the record's last tls-mac-size
// bytes to tls-mac (a pointer into the output) and leaves them out of the
// output length; a record shorter than the MAC fails, with nothing on the
// error queue. Encrypting is plain CTR.
TEST_P(TlsRecordTest, CtrRecordsLeaveTheirMacOutLikeTheDefaultProvider) {
  const Bytes key = RandomBytes(rng_, 32), iv = RandomBytes(rng_, 16);
  for (size_t mac_size : {size_t{0}, size_t{20}, size_t{48}, size_t{100}}) {
    for (int enc : {1, 0}) {
      SCOPED_TRACE(testing::Message() << "mac " << mac_size << " enc " << enc);
      InitCbc("AES-256-CTR", enc, TLS1_2_VERSION, mac_size, key, iv);
      for (size_t len : {size_t{1}, size_t{19}, size_t{20}, size_t{21},
                         size_t{100}, size_t{100}, size_t{4096}}) {
        const Bytes record = RandomBytes(rng_, len);
        Bytes out[2];
        int ok[2], out_len[2];
        ptrdiff_t mac_offset[2] = {-1, -1};
        std::string errors[2];
        for (int side = 0; side < 2; ++side) {
          out[side].assign(len, 0);
          ok[side] = EVP_CipherUpdate(ctx_[side].get(), out[side].data(),
                                      &out_len[side], record.data(), len);
          errors[side] = TakeErrors();
          unsigned char *mac = nullptr;
          OSSL_PARAM params[] = {
              OSSL_PARAM_construct_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC,
                                             reinterpret_cast<void **>(&mac),
                                             0),
              OSSL_PARAM_construct_end()};
          EXPECT_TRUE(EVP_CIPHER_CTX_get_params(ctx_[side].get(), params));
          if (mac != nullptr) mac_offset[side] = mac - out[side].data();
        }
        EXPECT_EQ(ok[0], ok[1]) << len;
        EXPECT_EQ(out_len[0], out_len[1]) << len;
        EXPECT_EQ(errors[0], errors[1]) << len;
        EXPECT_EQ(ToHex(out[0]), ToHex(out[1])) << len;
        EXPECT_EQ(mac_offset[0], mac_offset[1]) << len;
      }
    }
  }
}

TEST_P(TlsRecordTest, FinalAfterACbcRecordIsAnError) {
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  InitCbc("AES-128-CBC", 1, TLS1_2_VERSION, 20, key, iv);
  for (int side = 0; side < 2; ++side) {
    Bytes out(16);
    int len = 0;
    EXPECT_FALSE(EVP_CipherFinal_ex(ctx_[side].get(), out.data(), &len));
    ERR_clear_error();
  }
}

// libssl's TLS 1.2 GCM: key at init, 4-byte fixed IV, then per record the
// 13-byte AAD and one in-place update over explicit IV ‖ payload ‖ tag.
TEST_P(TlsRecordTest, Tls12GcmRecordsMatchTheDefaultProvider) {
  for (const char *name : {"AES-128-GCM", "AES-256-GCM"}) {
    SCOPED_TRACE(name);
    CipherPtr ciphers[2] = {env_->Aesmux(name), env_->Default(name)};
    const Bytes key = RandomBytes(rng_, EVP_CIPHER_get_key_length(ciphers[0].get()));
    // Encrypting draws the invocation field at random, so give both sides
    // the whole IV (the OpenSSH form, length -1) to compare bytes.
    Bytes whole_iv = RandomBytes(rng_, 12);
    std::vector<Bytes> sealed;
    std::vector<Bytes> headers;
    for (int i = 0; i < 2; ++i) {
      ctx_[i] = NewCipherCtx();
      ASSERT_TRUE(EVP_CipherInit_ex2(ctx_[i].get(), ciphers[i].get(),
                                     key.data(), nullptr, 1, nullptr));
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx_[i].get(), EVP_CTRL_GCM_SET_IV_FIXED,
                                      -1, whole_iv.data()));
    }
    for (size_t payload : {0, 1, 16, 17, 1000, 16384}) {
      Bytes header = RandomBytes(rng_, 13);
      const size_t record_len = 8 + payload + 16;
      header[11] = static_cast<uint8_t>((8 + payload) >> 8);
      header[12] = static_cast<uint8_t>(8 + payload);
      const Bytes body = RandomBytes(rng_, record_len);
      Bytes out[2];
      int out_len[2];
      for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx_[i].get(), EVP_CTRL_AEAD_TLS1_AAD, 13,
                                      header.data()),
                  16);
        out[i] = body;
        ASSERT_EQ(EVP_CipherUpdate(ctx_[i].get(), out[i].data(), &out_len[i],
                                   out[i].data(), record_len),
                  1);
      }
      EXPECT_EQ(out_len[0], static_cast<int>(record_len));
      EXPECT_EQ(out_len[0], out_len[1]);
      EXPECT_EQ(ToHex(out[0]), ToHex(out[1]));
      sealed.push_back(out[0]);
      header[11] = static_cast<uint8_t>(record_len >> 8);
      header[12] = static_cast<uint8_t>(record_len);
      headers.push_back(header);
    }
    // Decrypt with only the fixed part, like libssl's reading side.
    for (int i = 0; i < 2; ++i) {
      ctx_[i] = NewCipherCtx();
      ASSERT_TRUE(EVP_CipherInit_ex2(ctx_[i].get(), ciphers[i].get(),
                                     key.data(), nullptr, 0, nullptr));
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx_[i].get(), EVP_CTRL_GCM_SET_IV_FIXED,
                                      4, whole_iv.data()));
    }
    for (size_t r = 0; r < sealed.size(); ++r) {
      for (bool tamper : {false, true}) {
        Bytes out[2];
        int out_len[2] = {-1, -1};
        int ok[2];
        for (int i = 0; i < 2; ++i) {
          ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx_[i].get(), EVP_CTRL_AEAD_TLS1_AAD,
                                        13, headers[r].data()),
                    16);
          out[i] = sealed[r];
          if (tamper) out[i].back() ^= 0x40;
          ok[i] = EVP_CipherUpdate(ctx_[i].get(), out[i].data(), &out_len[i],
                                   out[i].data(), out[i].size());
          ERR_clear_error();
        }
        EXPECT_EQ(ok[0], tamper ? 0 : 1);
        EXPECT_EQ(ok[0], ok[1]);
        if (tamper) {
          // The payload that failed authentication is wiped.
          EXPECT_EQ(ToHex(out[0].data() + 8, out[0].size() - 24),
                    std::string(2 * (out[0].size() - 24), '0'));
          continue;
        }
        EXPECT_EQ(out_len[0], out_len[1]);
        EXPECT_EQ(ToHex(out[0]), ToHex(out[1]));
      }
    }
  }
}

// Records whose header does not match them, an IV longer than TLS's and a
// header given while encrypting for a record decrypted after a re-init:
// libssl never sends these, but a program can, and the default provider
// takes the header's length field as it is (less the explicit IV, and the
// tag when it was given decrypting) for what GCM authenticates.
TEST_P(TlsRecordTest, Tls12GcmRecordsWithAnyHeaderMatchTheDefaultProvider) {
  const char *name = "AES-256-GCM";
  CipherPtr ciphers[2] = {env_->Aesmux(name), env_->Default(name)};
  const Bytes key = RandomBytes(rng_, 32);
  for (size_t iv_len : {12, 16}) {
    const Bytes whole_iv = RandomBytes(rng_, iv_len);
    for (size_t declared : {24, 25, 100, 1000, 0xfff0, 0xffff}) {
      for (int way = 0; way < 3; ++way) {  // seal, open, header while sealing
        SCOPED_TRACE(::testing::Message() << "iv " << iv_len << " declared "
                                          << declared << " way " << way);
        const Bytes header = [&] {
          Bytes h = RandomBytes(rng_, 13);
          h[11] = static_cast<uint8_t>(declared >> 8);
          h[12] = static_cast<uint8_t>(declared);
          return h;
        }();
        // Opening: a record sealed (by the default provider's plain GCM
        // calls) under the header as the default provider corrects it.
        Bytes body = RandomBytes(rng_, 8 + 40 + 16);
        if (way != 0) {
          Bytes iv = whole_iv;
          std::memcpy(iv.data() + iv_len - 8, body.data(), 8);
          Bytes aad = header;
          const size_t corrected = declared - (way == 1 ? 24 : 8);
          aad[11] = static_cast<uint8_t>(corrected >> 8);
          aad[12] = static_cast<uint8_t>(corrected);
          CipherCtxPtr seal = NewCipherCtx();
          int n = 0;
          ASSERT_TRUE(EVP_EncryptInit_ex2(seal.get(), ciphers[1].get(),
                                          nullptr, nullptr, nullptr));
          ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(seal.get(), EVP_CTRL_AEAD_SET_IVLEN,
                                          static_cast<int>(iv_len), nullptr));
          ASSERT_TRUE(EVP_EncryptInit_ex2(seal.get(), nullptr, key.data(),
                                          iv.data(), nullptr));
          ASSERT_TRUE(EVP_EncryptUpdate(seal.get(), nullptr, &n, aad.data(),
                                        13));
          ASSERT_TRUE(EVP_EncryptUpdate(seal.get(), body.data() + 8, &n,
                                        body.data() + 8, 40));
          uint8_t none[16];
          ASSERT_TRUE(EVP_EncryptFinal_ex(seal.get(), none, &n));
          ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(seal.get(), EVP_CTRL_AEAD_GET_TAG,
                                          16, body.data() + 48));
        }
        Bytes out[2];
        int result[2];
        int extra[2];
        for (int i = 0; i < 2; ++i) {
          CipherCtxPtr ctx = NewCipherCtx();
          ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), ciphers[i].get(),
                                         key.data(), nullptr, way == 0,
                                         nullptr));
          if (way == 2) {
            ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr,
                                           nullptr, 1, nullptr));
          }
          ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN,
                                          static_cast<int>(iv_len), nullptr));
          ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IV_FIXED,
                                          -1,
                                          const_cast<uint8_t *>(whole_iv.data())));
          extra[i] = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_TLS1_AAD, 13,
                                         const_cast<uint8_t *>(header.data()));
          if (way == 2) {
            ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr,
                                           nullptr, 0, nullptr));
          }
          out[i] = body;
          result[i] = EVP_Cipher(ctx.get(), out[i].data(), out[i].data(),
                                 static_cast<unsigned>(out[i].size()));
          ERR_clear_error();
        }
        EXPECT_EQ(extra[0], 16);
        EXPECT_EQ(extra[1], 16);
        EXPECT_GT(result[1], 0);  // sealed, or opened and authentic
        EXPECT_EQ(result[0], result[1]);
        EXPECT_EQ(ToHex(out[0]), ToHex(out[1]));
      }
    }
  }
}

// A TLS 1.2 GCM record is one request, routed once by its AAD and payload
// together and counted once on the path that served it (the fallback path
// under `none` and, with fallback_max_len, up to 64 bytes in all), sealed
// or opened, authentic or not.
TEST_P(TlsRecordTest, Tls12GcmRecordIsOneRequestOnItsPath) {
  const KernelConfig &config = GetParam();
  const char *name = "AES-128-GCM";
  CipherPtr cipher = env_->Aesmux(name);
  const Bytes key = RandomBytes(rng_, 16), fixed = RandomBytes(rng_, 4);
  CipherCtxPtr seal = NewCipherCtx(), open = NewCipherCtx();
  ASSERT_TRUE(EVP_EncryptInit_ex2(seal.get(), cipher.get(), key.data(),
                                  nullptr, nullptr));
  ASSERT_TRUE(EVP_DecryptInit_ex2(open.get(), cipher.get(), key.data(),
                                  nullptr, nullptr));
  for (EVP_CIPHER_CTX *ctx : {seal.get(), open.get()}) {
    ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, 4,
                                    const_cast<uint8_t *>(fixed.data())));
  }
  for (size_t payload : {0, 16, 51, 52, 1000}) {
    SCOPED_TRACE(::testing::Message() << "payload " << payload);
    const uint64_t bytes = 13 + payload;
    const bool on_fallback = config.kernels == "none" ||
                             (config.routes() && bytes <= config.fallback_max_len);
    const char *path = on_fallback ? "fallback" : "simd";
    const char *other = on_fallback ? "simd" : "fallback";
    Bytes record = RandomBytes(rng_, 8 + payload + 16);
    uint8_t header[13] = {0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3};
    for (int way = 0; way < 3; ++way) {  // seal, open, open tampered
      EVP_CIPHER_CTX *ctx = way == 0 ? seal.get() : open.get();
      const size_t declared = way == 0 ? 8 + payload : 8 + payload + 16;
      header[11] = static_cast<uint8_t>(declared >> 8);
      header[12] = static_cast<uint8_t>(declared);
      if (way == 2) record[8] ^= 1;
      const uint64_t requests = env_->Stat(name, path, "requests");
      const uint64_t served = env_->Stat(name, path, "bytes");
      const uint64_t elsewhere = env_->Stat(name, other, "requests");
      ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 13, header),
                16);
      const int result = EVP_Cipher(ctx, record.data(), record.data(),
                                    static_cast<unsigned>(record.size()));
      ERR_clear_error();
      EXPECT_EQ(result > 0, way != 2) << "way " << way;
      EXPECT_EQ(env_->Stat(name, path, "requests"), requests + 1)
          << "way " << way;
      EXPECT_EQ(env_->Stat(name, path, "bytes"), served + bytes)
          << "way " << way;
      EXPECT_EQ(env_->Stat(name, other, "requests"), elsewhere)
          << "way " << way;
    }
  }
}

// OpenSSH's aes*-gcm@openssh.com: whole IV once, then per packet
// GCM_IV_GEN, 4 bytes of AAD through EVP_Cipher, the payload, and
// EVP_Cipher(NULL, NULL, 0) to finish (negative on a bad tag).
TEST_P(TlsRecordTest, OpenSshGcmPacketsMatchTheDefaultProvider) {
  for (const char *name : {"AES-128-GCM", "AES-256-GCM"}) {
    SCOPED_TRACE(name);
    CipherPtr ciphers[2] = {env_->Aesmux(name), env_->Default(name)};
    const Bytes key = RandomBytes(rng_, EVP_CIPHER_get_key_length(ciphers[0].get()));
    Bytes iv = RandomBytes(rng_, 12);
    iv[11] = 0xfe;  // the invocation counter carries within the packets
    CipherCtxPtr enc[2], dec[2];
    for (int i = 0; i < 2; ++i) {
      enc[i] = NewCipherCtx();
      dec[i] = NewCipherCtx();
      ASSERT_TRUE(EVP_CipherInit(enc[i].get(), ciphers[i].get(), nullptr,
                                 nullptr, 1));
      ASSERT_TRUE(EVP_CipherInit(enc[i].get(), nullptr, key.data(), nullptr, -1));
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(enc[i].get(), EVP_CTRL_GCM_SET_IV_FIXED,
                                      -1, iv.data()));
      ASSERT_TRUE(EVP_CipherInit(dec[i].get(), ciphers[i].get(), nullptr,
                                 nullptr, 0));
      ASSERT_TRUE(EVP_CipherInit(dec[i].get(), nullptr, key.data(), nullptr, -1));
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(dec[i].get(), EVP_CTRL_GCM_SET_IV_FIXED,
                                      -1, iv.data()));
    }
    for (int packet = 0; packet < 6; ++packet) {
      const size_t len = 16 * (1 + rng_() % 100);
      const Bytes aad = RandomBytes(rng_, 4), plain = RandomBytes(rng_, len);
      Bytes sealed[2], tag[2];
      for (int i = 0; i < 2; ++i) {
        uint8_t last;
        ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(enc[i].get(), EVP_CTRL_GCM_IV_GEN, 1,
                                        &last));
        sealed[i].resize(len);
        tag[i].resize(16);
        ASSERT_EQ(EVP_Cipher(enc[i].get(), nullptr, aad.data(), 4), 4);
        ASSERT_EQ(EVP_Cipher(enc[i].get(), sealed[i].data(), plain.data(), len),
                  static_cast<int>(len));
        ASSERT_GE(EVP_Cipher(enc[i].get(), nullptr, nullptr, 0), 0);
        ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(enc[i].get(), EVP_CTRL_GCM_GET_TAG, 16,
                                        tag[i].data()));
      }
      EXPECT_EQ(sealed[0], sealed[1]);
      EXPECT_EQ(tag[0], tag[1]);
      for (int i = 0; i < 2; ++i) {
        Bytes opened(len);
        Bytes bad_tag = tag[i];
        if (packet == 3) bad_tag[0] ^= 1;
        uint8_t last;
        ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(dec[i].get(), EVP_CTRL_GCM_IV_GEN, 1,
                                        &last));
        ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(dec[i].get(), EVP_CTRL_GCM_SET_TAG, 16,
                                        bad_tag.data()));
        ASSERT_EQ(EVP_Cipher(dec[i].get(), nullptr, aad.data(), 4), 4);
        ASSERT_EQ(EVP_Cipher(dec[i].get(), opened.data(), sealed[i].data(), len),
                  static_cast<int>(len));
        const int finished = EVP_Cipher(dec[i].get(), nullptr, nullptr, 0);
        if (packet == 3) {
          EXPECT_LT(finished, 0);
        } else {
          EXPECT_GE(finished, 0);
          EXPECT_EQ(opened, plain);
        }
        ERR_clear_error();
      }
    }
  }
}

// tlsivgen, and a TLS 1.2 GCM record sealed with the explicit IV it
// makes, after the IV was shortened below its 8-byte invocation field
// (tlsivfixed, then ivlen): aesmux refuses both and keeps the IV length as
// set. OpenSSL 3.0 increments the 8 - ivlen bytes in front of its IV
// there, so the default provider is not asked.
TEST_P(TlsRecordTest, TlsIvGenRefusesAnIvShorterThanItsCounter) {
  CipherPtr cipher = env_->Aesmux("AES-128-GCM");
  ASSERT_NE(cipher, nullptr);
  const Bytes key = RandomBytes(rng_, 16);
  const Bytes iv(12, 0xff);  // every increment of the counter carries
  for (int enc : {1, 0}) {
    for (size_t iv_len : {1, 7}) {
      SCOPED_TRACE("enc " + std::to_string(enc) + " ivlen " +
                   std::to_string(iv_len));
      auto ctx = NewCipherCtx();
      ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), cipher.get(), key.data(),
                                     nullptr, enc, nullptr));
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IV_FIXED, -1,
                                      const_cast<uint8_t *>(iv.data())));
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN,
                                      static_cast<int>(iv_len), nullptr));
      uint8_t explicit_iv[8];
      EXPECT_LE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_IV_GEN, 8,
                                    explicit_iv),
                0);
      if (enc) {
        Bytes header(13, 0);
        header[12] = 8 + 16;
        ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_TLS1_AAD, 13,
                                      header.data()),
                  16);
        Bytes record(8 + 16 + 16, 0);
        int out_len = -1;
        EXPECT_FALSE(EVP_CipherUpdate(ctx.get(), record.data(), &out_len,
                                      record.data(),
                                      static_cast<int>(record.size())));
      }
      size_t got = 0;
      OSSL_PARAM params[] = {
          OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_IVLEN, &got),
          OSSL_PARAM_construct_end()};
      EXPECT_TRUE(EVP_CIPHER_CTX_get_params(ctx.get(), params));
      EXPECT_EQ(got, iv_len);
      ERR_clear_error();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, TlsRecordTest,
                         ::testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

}  // namespace
}  // namespace aesmux::test
