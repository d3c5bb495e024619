// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// OpenSSL 3.5's opaque symmetric keys (EVP_SKEY) with aesmux's ciphers.
// EVP_CipherInit_SKEY takes a key only from the cipher's own provider, so
// aesmux manages keys under the default provider's names ("AES" and
// "GENERIC-SECRET"): a key imported where aesmux is preferred is aesmux's,
// and works with every cipher it serves, exactly as the default provider's
// keys work with its ciphers; keys move between the two with
// EVP_SKEY_to_provider. Every result is compared with the default
// provider's, on its own keys. Built against older headers, the suite says
// why it has nothing to run.
#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/opensslv.h>

#include <cstring>
#include <random>
#include <set>
#include <string>

#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

#if OPENSSL_VERSION_NUMBER >= 0x30500000L

struct SkeyDeleter {
  void operator()(EVP_SKEY *key) const { EVP_SKEY_free(key); }
};
using SkeyPtr = std::unique_ptr<EVP_SKEY, SkeyDeleter>;

constexpr const char *kAlgorithms[] = {
    "AES-128-ECB", "AES-192-ECB", "AES-256-ECB", "AES-128-CBC", "AES-192-CBC",
    "AES-256-CBC", "AES-128-CTR", "AES-192-CTR", "AES-256-CTR", "AES-128-XTS",
    "AES-256-XTS", "AES-128-GCM", "AES-192-GCM", "AES-256-GCM"};

class SkeyTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.loaded()) << env_.error(); }

  SkeyPtr Import(const char *provider, const char *type, const Bytes &key) {
    const std::string query = std::string("provider=") + provider;
    return SkeyPtr(EVP_SKEY_import_raw_key(
        env_.libctx(), type, const_cast<uint8_t *>(key.data()), key.size(),
        query.c_str()));
  }

  // One message through EVP_CipherInit_SKEY: the output, and for GCM the
  // tag (made, or checked: `tag` is then the expected one). Empty with
  // `failed` set when a call fails.
  struct Result {
    bool failed = false;
    int reason = 0;
    Bytes out;
    Bytes tag;
    bool operator==(const Result &) const = default;
  };
  Result Run(const EVP_CIPHER *cipher, EVP_SKEY *key, bool encrypt,
             const Bytes &iv, const Bytes &in, const Bytes &tag = {}) {
    Result r;
    CipherCtxPtr ctx = NewCipherCtx();
    const bool gcm = EVP_CIPHER_get_mode(cipher) == EVP_CIPH_GCM_MODE;
    r.out.resize(in.size() + 16);
    int len = 0, tail = 0;
    if (!EVP_CipherInit_SKEY(ctx.get(), cipher, key, iv.data(), iv.size(),
                             encrypt, nullptr) ||
        (gcm && !encrypt &&
         !EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG,
                              static_cast<int>(tag.size()),
                              const_cast<uint8_t *>(tag.data()))) ||
        !EVP_CipherUpdate(ctx.get(), r.out.data(), &len, in.data(),
                          static_cast<int>(in.size())) ||
        !EVP_CipherFinal_ex(ctx.get(), r.out.data() + len, &tail)) {
      r.failed = true;
      r.reason = ERR_GET_REASON(ERR_peek_last_error());
      ERR_clear_error();
      r.out.clear();
      return r;
    }
    r.out.resize(static_cast<size_t>(len + tail));
    if (gcm && encrypt) {
      r.tag.resize(16);
      EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                                    r.tag.data()),
                1);
    }
    return r;
  }

  ProviderEnv env_;
  std::mt19937_64 rng_{0x736b6579};
};

// Every algorithm, both directions, on a key of each type: aesmux's key
// with aesmux's cipher equals the default provider's key with its cipher.
TEST_F(SkeyTest, EveryCipherTakesItsProvidersKeys) {
  for (const char *name : kAlgorithms) {
    SCOPED_TRACE(name);
    CipherPtr ours = env_.Aesmux(name), theirs = env_.Default(name);
    const size_t key_len = static_cast<size_t>(EVP_CIPHER_get_key_length(ours.get()));
    const bool xts = std::strstr(name, "XTS") != nullptr;
    const bool gcm = std::strstr(name, "GCM") != nullptr;
    const Bytes key = RandomBytes(rng_, key_len);
    // An XTS key is two AES keys: only a generic secret holds 64 bytes.
    for (const char *type : {"AES", "GENERIC-SECRET"}) {
      SCOPED_TRACE(type);
      SkeyPtr our_key = Import("aesmux", type, key);
      SkeyPtr their_key = Import("default", type, key);
      ASSERT_EQ(our_key == nullptr, their_key == nullptr);
      ERR_clear_error();
      if (their_key == nullptr) {
        EXPECT_TRUE(xts && std::strcmp(type, "AES") == 0 && key_len == 64);
        continue;
      }
      EXPECT_STREQ(EVP_SKEY_get0_provider_name(our_key.get()), "aesmux");
      const Bytes iv = RandomBytes(rng_, gcm ? 12 : 16);
      const Bytes plain = RandomBytes(rng_, 16 * (1 + rng_() % 40));
      const Result ours_enc = Run(ours.get(), our_key.get(), true, iv, plain);
      ASSERT_FALSE(ours_enc.failed) << ours_enc.reason;
      EXPECT_EQ(ours_enc, Run(theirs.get(), their_key.get(), true, iv, plain));
      const Result ours_dec = Run(ours.get(), our_key.get(), false, iv,
                                  ours_enc.out, ours_enc.tag);
      EXPECT_EQ(ours_dec.out, plain);
      EXPECT_EQ(ours_dec, Run(theirs.get(), their_key.get(), false, iv,
                              ours_enc.out, ours_enc.tag));
    }
  }
}

// Where aesmux is preferred (default_properties = ?provider=aesmux, as
// README configures it), the key a program imports without a property query
// is aesmux's, and the cipher it fetches the same way takes it.
TEST_F(SkeyTest, PreferredAesmuxManagesTheKeysItsCiphersTake) {
  ASSERT_EQ(EVP_set_default_properties(env_.libctx(), "?provider=aesmux"), 1);
  const Bytes key = RandomBytes(rng_, 32), iv = RandomBytes(rng_, 12);
  SkeyPtr skey(EVP_SKEY_import_raw_key(env_.libctx(), "AES",
                                       const_cast<uint8_t *>(key.data()), 32,
                                       nullptr));
  ASSERT_NE(skey, nullptr) << TakeErrors();
  EXPECT_STREQ(EVP_SKEY_get0_provider_name(skey.get()), "aesmux");
  EXPECT_STREQ(EVP_SKEY_get0_skeymgmt_name(skey.get()), "AES");
  EXPECT_TRUE(EVP_SKEY_is_a(skey.get(), "AES"));
  CipherPtr cipher(EVP_CIPHER_fetch(env_.libctx(), "AES-256-GCM", nullptr));
  ASSERT_STREQ(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(cipher.get())),
               "aesmux");
  const Bytes plain = RandomBytes(rng_, 100);
  const Result ours = Run(cipher.get(), skey.get(), true, iv, plain);
  ASSERT_FALSE(ours.failed) << ours.reason;
  SkeyPtr their_key = Import("default", "AES", key);
  EXPECT_EQ(ours, Run(env_.Default("AES-256-GCM").get(), their_key.get(), true,
                      iv, plain));
  ASSERT_EQ(EVP_set_default_properties(env_.libctx(), ""), 1);
}

// Import and export follow the default provider's rules: an AES key is 16,
// 24 or 32 bytes, a generic secret any non-zero length; the raw bytes come
// back as they went in.
TEST_F(SkeyTest, ImportAndExportAsTheDefaultProvider) {
  for (const char *type : {"AES", "GENERIC-SECRET"}) {
    for (size_t len : {0, 1, 15, 16, 17, 24, 32, 33, 64, 100}) {
      SCOPED_TRACE(testing::Message() << type << ", " << len << " bytes");
      const Bytes key = RandomBytes(rng_, len);
      Bytes storage = key;
      storage.push_back(0);  // never a null pointer, even for no bytes
      SkeyPtr ours(EVP_SKEY_import_raw_key(env_.libctx(), type, storage.data(),
                                           len, "provider=aesmux"));
      SkeyPtr theirs(EVP_SKEY_import_raw_key(env_.libctx(), type, storage.data(),
                                             len, "provider=default"));
      ERR_clear_error();
      ASSERT_EQ(ours == nullptr, theirs == nullptr);
      if (ours == nullptr) continue;
      const unsigned char *raw = nullptr;
      size_t raw_len = 0;
      ASSERT_EQ(EVP_SKEY_get0_raw_key(ours.get(), &raw, &raw_len), 1);
      EXPECT_EQ(Bytes(raw, raw + raw_len), key);
      EXPECT_STREQ(EVP_SKEY_get0_skeymgmt_name(ours.get()),
                   EVP_SKEY_get0_skeymgmt_name(theirs.get()));
    }
  }
#if OPENSSL_VERSION_NUMBER >= 0x30600000L
  // 3.6 lists what an import takes.
  for (const char *type : {"AES", "GENERIC-SECRET"}) {
    EVP_SKEYMGMT *ours = EVP_SKEYMGMT_fetch(env_.libctx(), type, "provider=aesmux");
    EVP_SKEYMGMT *theirs = EVP_SKEYMGMT_fetch(env_.libctx(), type, "provider=default");
    ASSERT_NE(ours, nullptr);
    ASSERT_NE(theirs, nullptr);
    std::set<std::string> our_keys, their_keys;
    for (const OSSL_PARAM *p = EVP_SKEYMGMT_get0_imp_settable_params(ours);
         p && p->key; ++p) {
      our_keys.insert(p->key);
    }
    for (const OSSL_PARAM *p = EVP_SKEYMGMT_get0_imp_settable_params(theirs);
         p && p->key; ++p) {
      their_keys.insert(p->key);
    }
    EXPECT_EQ(our_keys, their_keys) << type;
    EVP_SKEYMGMT_free(ours);
    EVP_SKEYMGMT_free(theirs);
  }
#endif
}

// A key takes a cipher of another provider only once moved there with
// EVP_SKEY_to_provider, in either direction; EVP refuses it before that,
// whoever the providers are.
TEST_F(SkeyTest, KeysMoveBetweenProvidersWithToProvider) {
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  const Bytes plain = RandomBytes(rng_, 64);
  CipherPtr ours = env_.Aesmux("AES-128-CBC"), theirs = env_.Default("AES-128-CBC");
  SkeyPtr their_key = Import("default", "AES", key);
  SkeyPtr our_key = Import("aesmux", "AES", key);
  const Result expected = Run(theirs.get(), their_key.get(), true, iv, plain);
  ASSERT_FALSE(expected.failed);

  EXPECT_TRUE(Run(ours.get(), their_key.get(), true, iv, plain).failed);
  EXPECT_TRUE(Run(theirs.get(), our_key.get(), true, iv, plain).failed);
  SkeyPtr moved_in(EVP_SKEY_to_provider(their_key.get(), env_.libctx(),
                                        env_.aesmux(), nullptr));
  ASSERT_NE(moved_in, nullptr) << TakeErrors();
  EXPECT_EQ(Run(ours.get(), moved_in.get(), true, iv, plain), expected);
  SkeyPtr moved_out(EVP_SKEY_to_provider(our_key.get(), env_.libctx(), nullptr,
                                         "provider=default"));
  ASSERT_NE(moved_out, nullptr) << TakeErrors();
  EXPECT_STREQ(EVP_SKEY_get0_provider_name(moved_out.get()), "default");
  EXPECT_EQ(Run(theirs.get(), moved_out.get(), true, iv, plain), expected);
}

// A key of the wrong length for the cipher fails at init, with the default
// provider's reason; a key given once serves IV-only re-initialisations.
TEST_F(SkeyTest, KeyLengthAndIvOnlyReinitAsTheDefaultProvider) {
  const Bytes key = RandomBytes(rng_, 20), iv = RandomBytes(rng_, 16);
  const Bytes plain = RandomBytes(rng_, 48);
  SkeyPtr our_key = Import("aesmux", "GENERIC-SECRET", key);
  SkeyPtr their_key = Import("default", "GENERIC-SECRET", key);
  for (const char *name : {"AES-128-CBC", "AES-128-GCM", "AES-128-XTS"}) {
    SCOPED_TRACE(name);
    const Result ours = Run(env_.Aesmux(name).get(), our_key.get(), true, iv, plain);
    EXPECT_TRUE(ours.failed);
    EXPECT_EQ(ours, Run(env_.Default(name).get(), their_key.get(), true, iv, plain));
  }

  const Bytes good = RandomBytes(rng_, 16), iv2 = RandomBytes(rng_, 16);
  SkeyPtr our_good = Import("aesmux", "AES", good);
  SkeyPtr their_good = Import("default", "AES", good);
  Bytes outputs[2];
  CipherPtr ciphers[2] = {env_.Aesmux("AES-128-CTR"), env_.Default("AES-128-CTR")};
  EVP_SKEY *keys[2] = {our_good.get(), their_good.get()};
  for (int i = 0; i < 2; ++i) {
    const CipherPtr &cipher = ciphers[i];
    EVP_SKEY *skey = keys[i];
    CipherCtxPtr ctx = NewCipherCtx();
    Bytes out(48);
    int len = 0;
    ASSERT_EQ(EVP_CipherInit_SKEY(ctx.get(), cipher.get(), skey, iv.data(), 16,
                                  1, nullptr),
              1);
    ASSERT_EQ(EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr, iv2.data(), -1,
                                 nullptr),
              1);
    ASSERT_EQ(EVP_CipherUpdate(ctx.get(), out.data(), &len, plain.data(), 48), 1);
    outputs[i] = out;
  }
  EXPECT_EQ(ToHex(outputs[0]), ToHex(outputs[1]));
}

// EVP_CipherInit_SKEY without a key gives a context keyed before a new IV,
// as an init without a key does; the output is the default provider's for
// that key and IV (through a raw key: its own SKEY init reads the missing
// key and crashes, docs/differences.md).
TEST_F(SkeyTest, SkeyInitWithoutAKeyTakesANewIv) {
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  const Bytes iv2 = RandomBytes(rng_, 16), plain = RandomBytes(rng_, 48);
  SkeyPtr our_key = Import("aesmux", "AES", key);
  for (const char *name : {"AES-128-CBC", "AES-128-CTR"}) {
    SCOPED_TRACE(name);
    CipherPtr ours = env_.Aesmux(name), theirs = env_.Default(name);
    Bytes outputs[2] = {Bytes(48), Bytes(48)};
    int len = 0;
    CipherCtxPtr ctx = NewCipherCtx();
    ASSERT_EQ(EVP_CipherInit_SKEY(ctx.get(), ours.get(), our_key.get(),
                                  iv.data(), 16, 1, nullptr),
              1);
    ASSERT_EQ(EVP_CipherInit_SKEY(ctx.get(), nullptr, nullptr, iv2.data(), 16,
                                  1, nullptr),
              1);
    ASSERT_EQ(EVP_CipherUpdate(ctx.get(), outputs[0].data(), &len,
                               plain.data(), 48),
              1);
    CipherCtxPtr reference = NewCipherCtx();
    ASSERT_EQ(EVP_CipherInit_ex2(reference.get(), theirs.get(), key.data(),
                                 iv2.data(), 1, nullptr),
              1);
    ASSERT_EQ(EVP_CipherUpdate(reference.get(), outputs[1].data(), &len,
                               plain.data(), 48),
              1);
    EXPECT_EQ(ToHex(outputs[0]), ToHex(outputs[1]));
  }
}

#if OPENSSL_VERSION_NUMBER >= 0x30600000L
// 3.6 derives keys into a key manager: HKDF (the default provider's)
// derives an AES key into aesmux's when given aesmux's, which aesmux's
// ciphers then take.
TEST_F(SkeyTest, KdfDerivesIntoAesmuxsKeyManager) {
  EVP_KDF *kdf = EVP_KDF_fetch(env_.libctx(), "HKDF", "provider=default");
  ASSERT_NE(kdf, nullptr);
  EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(kdf);
  char digest[] = "SHA256";
  unsigned char secret[] = "secret", salt[] = "salt";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, secret, 6),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt, 4),
      OSSL_PARAM_END};
  EVP_SKEYMGMT *mgmt = EVP_SKEYMGMT_fetch(env_.libctx(), "AES", "provider=aesmux");
  ASSERT_NE(mgmt, nullptr);
  SkeyPtr skey(EVP_KDF_derive_SKEY(kctx, mgmt, "AES", nullptr, 16, params));
  ASSERT_NE(skey, nullptr) << TakeErrors();
  EXPECT_STREQ(EVP_SKEY_get0_provider_name(skey.get()), "aesmux");
  Bytes raw(16);
  ASSERT_EQ(EVP_KDF_derive(kctx, raw.data(), 16, params), 1);
  const Bytes iv = RandomBytes(rng_, 12), plain = RandomBytes(rng_, 77);
  SkeyPtr their_key = Import("default", "AES", raw);
  const Result ours = Run(env_.Aesmux("AES-128-GCM").get(), skey.get(), true, iv, plain);
  ASSERT_FALSE(ours.failed);
  EXPECT_EQ(ours, Run(env_.Default("AES-128-GCM").get(), their_key.get(), true,
                      iv, plain));
  EVP_SKEYMGMT_free(mgmt);
  EVP_KDF_CTX_free(kctx);
  EVP_KDF_free(kdf);
}
#endif

#else

TEST(SkeyTest, NeedsOpenSsl35Headers) {
  GTEST_SKIP() << "built against OpenSSL " OPENSSL_VERSION_STR
                  " headers: EVP_SKEY came with 3.5";
}

#endif

}  // namespace
}  // namespace aesmux::test
