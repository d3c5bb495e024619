// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The parts of the cipher contract that OpenSSL changed after 3.0, each
// compared with the default provider of the libcrypto the test runs on
// (3.0 from Debian 12, 3.5 and 3.6 in scripts/test-openssl.sh):
//   - GCM's "iv-generated" (3.4): whether the IV was drawn at random;
//   - the "encrypt-then-mac" algorithm parameter (3.6);
//   - how an array of several parameters is walked: one key after another
//     in a fixed order, each key's first occurrence (3.0, and 3.6 but for
//     GCM's), the array in order with every occurrence (GCM, 3.2 to 3.5),
//     and from 3.6 a key named twice refused before anything is done;
//   - GCM's tag and IV asked for without a buffer (3.6: the size only);
//   - the IV as a copy or a pointer: which error is left behind;
//   - the lists of gettable and settable parameters.
// Each case runs the same calls on both providers and compares what each
// returned, what it wrote, and the reason of the error it raised.
#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

constexpr const char *kAlgorithms[] = {
    "AES-128-ECB", "AES-192-ECB", "AES-256-ECB", "AES-128-CBC", "AES-192-CBC",
    "AES-256-CBC", "AES-128-CTR", "AES-192-CTR", "AES-256-CTR", "AES-128-XTS",
    "AES-256-XTS", "AES-128-GCM", "AES-192-GCM", "AES-256-GCM"};

// Keys absent from older headers.
constexpr const char *kIvGenerated = "iv-generated";
constexpr const char *kEncryptThenMac = "encrypt-then-mac";

// What one get or set returned: its result, each parameter's return_size
// and bytes (for a get), and the reason of the last error raised.
struct Outcome {
  int result = 0;
  std::vector<std::string> values;
  int reason = 0;

  bool operator==(const Outcome &) const = default;
};

std::ostream &operator<<(std::ostream &os, const Outcome &o) {
  os << "{result " << o.result << ", reason " << o.reason << ", values";
  for (const std::string &v : o.values) os << " [" << v << "]";
  return os << "}";
}

// A parameter array with storage for each value: `Add` keeps the bytes.
class Params {
 public:
  Params &Size(const char *key, size_t value) {
    return Add(key, OSSL_PARAM_UNSIGNED_INTEGER, &value, sizeof(value));
  }
  Params &Uint(const char *key, unsigned int value) {
    return Add(key, OSSL_PARAM_UNSIGNED_INTEGER, &value, sizeof(value));
  }
  Params &Int(const char *key, int value) {
    return Add(key, OSSL_PARAM_INTEGER, &value, sizeof(value));
  }
  Params &Octets(const char *key, const Bytes &value) {
    return Add(key, OSSL_PARAM_OCTET_STRING, value.data(), value.size());
  }
  // An octet pointer parameter (its value, a pointer into each provider's
  // own context, is not compared: only its size).
  Params &Pointer(const char *key) {
    const void *none = nullptr;
    return Add(key, OSSL_PARAM_OCTET_PTR, &none, sizeof(none));
  }
  // An octet string parameter with no buffer: a size query.
  Params &NoBuffer(const char *key, size_t data_size) {
    storage_.emplace_back();
    params_.push_back({key, OSSL_PARAM_OCTET_STRING, nullptr, data_size,
                       OSSL_PARAM_UNMODIFIED});
    return *this;
  }

  OSSL_PARAM *get() {
    array_ = params_;
    for (size_t i = 0; i < array_.size(); ++i) {
      if (array_[i].data != nullptr || !storage_[i].empty()) {
        array_[i].data = storage_[i].data();
      }
      array_[i].return_size = OSSL_PARAM_UNMODIFIED;
    }
    array_.push_back(OSSL_PARAM_END);
    return array_.data();
  }

  // Each parameter after a get: "unmodified", or its size and bytes.
  std::vector<std::string> Values() const {
    std::vector<std::string> values;
    for (size_t i = 0; i + 1 < array_.size(); ++i) {
      const OSSL_PARAM &p = array_[i];
      if (p.return_size == OSSL_PARAM_UNMODIFIED) {
        values.push_back("unmodified");
        continue;
      }
      std::string v = std::to_string(p.return_size);
      if (p.data != nullptr && p.return_size <= p.data_size &&
          p.data_type != OSSL_PARAM_OCTET_PTR) {
        v += ":" + ToHex(static_cast<const uint8_t *>(p.data), p.return_size);
      }
      values.push_back(v);
    }
    return values;
  }

 private:
  Params &Add(const char *key, unsigned int type, const void *value,
              size_t size) {
    const auto *bytes = static_cast<const uint8_t *>(value);
    storage_.emplace_back(bytes, bytes + size);
    if (storage_.back().empty()) storage_.back().push_back(0);
    params_.push_back({key, type, storage_.back().data(), size,
                       OSSL_PARAM_UNMODIFIED});
    return *this;
  }

  std::vector<OSSL_PARAM> params_;
  std::vector<Bytes> storage_;
  std::vector<OSSL_PARAM> array_;
};

int TakeReason() {
  const int reason = ERR_GET_REASON(ERR_peek_last_error());
  ERR_clear_error();
  return reason;
}

Outcome Get(EVP_CIPHER_CTX *ctx, Params params) {
  Outcome o;
  o.result = EVP_CIPHER_CTX_get_params(ctx, params.get());
  o.values = params.Values();
  o.reason = TakeReason();
  return o;
}

Outcome Set(EVP_CIPHER_CTX *ctx, Params params) {
  Outcome o;
  o.result = EVP_CIPHER_CTX_set_params(ctx, params.get());
  o.reason = TakeReason();
  return o;
}

Outcome GetAlgorithm(const EVP_CIPHER *cipher, Params params) {
  Outcome o;
  o.result = EVP_CIPHER_get_params(const_cast<EVP_CIPHER *>(cipher),
                                   params.get());
  o.values = params.Values();
  o.reason = TakeReason();
  return o;
}

// The keys and types of a parameter list.
std::map<std::string, unsigned int> Keys(const OSSL_PARAM *list) {
  std::map<std::string, unsigned int> keys;
  for (const OSSL_PARAM *p = list; p != nullptr && p->key != nullptr; ++p) {
    keys[p->key] = p->data_type;
  }
  return keys;
}

class ContractVersionsTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.loaded()) << env_.error();
    std::printf("on %s\n", OpenSSL_version(OPENSSL_VERSION));
  }

  // The same algorithm on both sides, each context keyed (and given an IV
  // unless `iv` is false) for `encrypt`.
  struct Pair {
    CipherPtr ours, theirs;
    CipherCtxPtr ours_ctx = NewCipherCtx(), theirs_ctx = NewCipherCtx();
  };
  Pair Make(const char *name, bool encrypt, bool key = true, bool iv = true) {
    Pair pair{env_.Aesmux(name), env_.Default(name)};
    EXPECT_NE(pair.ours, nullptr);
    EXPECT_NE(pair.theirs, nullptr);
    Bytes k(static_cast<size_t>(EVP_CIPHER_get_key_length(pair.ours.get())));
    for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i * 7 + 1);
    const Bytes v(16, 0x5a);
    for (auto [cipher, ctx] : {std::pair(pair.ours.get(), pair.ours_ctx.get()),
                               std::pair(pair.theirs.get(), pair.theirs_ctx.get())}) {
      EXPECT_EQ(EVP_CipherInit_ex2(ctx, cipher, key ? k.data() : nullptr,
                                   iv ? v.data() : nullptr, encrypt, nullptr),
                1)
          << name << ": " << TakeErrors();
    }
    return pair;
  }

  ProviderEnv env_;
};

TEST_F(ContractVersionsTest, ParameterListsAreTheDefaultProvidersLists) {
  for (const char *name : kAlgorithms) {
    SCOPED_TRACE(name);
    Pair p = Make(name, true);
    EXPECT_EQ(Keys(EVP_CIPHER_gettable_params(p.ours.get())),
              Keys(EVP_CIPHER_gettable_params(p.theirs.get())));
    EXPECT_EQ(Keys(EVP_CIPHER_gettable_ctx_params(p.ours.get())),
              Keys(EVP_CIPHER_gettable_ctx_params(p.theirs.get())));
    EXPECT_EQ(Keys(EVP_CIPHER_settable_ctx_params(p.ours.get())),
              Keys(EVP_CIPHER_settable_ctx_params(p.theirs.get())));
    EXPECT_EQ(Keys(EVP_CIPHER_CTX_gettable_params(p.ours_ctx.get())),
              Keys(EVP_CIPHER_CTX_gettable_params(p.theirs_ctx.get())));
    EXPECT_EQ(Keys(EVP_CIPHER_CTX_settable_params(p.ours_ctx.get())),
              Keys(EVP_CIPHER_CTX_settable_params(p.theirs_ctx.get())));
  }
}

// Every algorithm constant the default provider lists (3.6 adds "encrypt-then-mac"),
// asked for one at a time and all at once.
TEST_F(ContractVersionsTest, AlgorithmParametersAnswerAsTheDefaultProvider) {
  for (const char *name : kAlgorithms) {
    SCOPED_TRACE(name);
    CipherPtr ours = env_.Aesmux(name), theirs = env_.Default(name);
    Params all;  // points at the keys' strings
    const std::map<std::string, unsigned int> keys =
        Keys(EVP_CIPHER_gettable_params(theirs.get()));
    for (const auto &[key, type] : keys) {
      SCOPED_TRACE(key);
      Params one;
      if (type == OSSL_PARAM_INTEGER) {
        one.Int(key.c_str(), -7);
        all.Int(key.c_str(), -7);
      } else {
        one.Size(key.c_str(), 99);
        all.Size(key.c_str(), 99);
      }
      EXPECT_EQ(GetAlgorithm(ours.get(), one), GetAlgorithm(theirs.get(), one));
    }
    all.Int(kEncryptThenMac, -7);  // asked for whether listed or not
    EXPECT_EQ(GetAlgorithm(ours.get(), all), GetAlgorithm(theirs.get(), all));
  }
}

TEST_F(ContractVersionsTest, GcmIvGeneratedSaysWhetherTheIvWasDrawn) {
  const Bytes data(40, 0x11);
  Bytes out(64);
  int len = 0;
  auto iv_generated = [&](Pair &p) {
    const Params q = Params().Uint(kIvGenerated, 7);
    const Outcome ours = Get(p.ours_ctx.get(), q);
    EXPECT_EQ(ours, Get(p.theirs_ctx.get(), q));
    return ours;
  };
  {
    SCOPED_TRACE("an IV given");
    Pair p = Make("AES-128-GCM", true);
    iv_generated(p);
  }
  {
    SCOPED_TRACE("no IV: one drawn at the first update, and kept after a new IV");
    Pair p = Make("AES-128-GCM", true, true, false);
    iv_generated(p);
    for (EVP_CIPHER_CTX *ctx : {p.ours_ctx.get(), p.theirs_ctx.get()}) {
      ASSERT_EQ(EVP_EncryptUpdate(ctx, out.data(), &len, data.data(), 40), 1);
    }
    const Outcome drawn = iv_generated(p);
    CipherCtxPtr ours_copy = NewCipherCtx(), theirs_copy = NewCipherCtx();
    ASSERT_EQ(EVP_CIPHER_CTX_copy(ours_copy.get(), p.ours_ctx.get()), 1);
    ASSERT_EQ(EVP_CIPHER_CTX_copy(theirs_copy.get(), p.theirs_ctx.get()), 1);
    const Params q = Params().Uint(kIvGenerated, 7);
    EXPECT_EQ(Get(ours_copy.get(), q), Get(theirs_copy.get(), q)) << "a copy";
    const Bytes iv(12, 0x33);
    for (EVP_CIPHER_CTX *ctx : {p.ours_ctx.get(), p.theirs_ctx.get()}) {
      ASSERT_EQ(EVP_EncryptInit_ex2(ctx, nullptr, nullptr, iv.data(), nullptr), 1);
    }
    EXPECT_EQ(iv_generated(p), drawn) << "after a new IV";
  }
  for (bool encrypt : {true, false}) {
    SCOPED_TRACE(encrypt ? "TLS fixed IV, encrypting: the rest drawn"
                         : "TLS fixed IV, decrypting");
    Pair p = Make("AES-256-GCM", encrypt, true, false);
    Bytes fixed(4, 0x44);
    for (EVP_CIPHER_CTX *ctx : {p.ours_ctx.get(), p.theirs_ctx.get()}) {
      ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IV_FIXED, 4,
                                    fixed.data()),
                1);
    }
    iv_generated(p);
  }
}

// A key named twice, and a key among the ones each family knows, in one
// array: what is done, and in which order, is the default provider's.
TEST_F(ContractVersionsTest, RepeatedKeysAsTheDefaultProvider) {
  for (const char *name : kAlgorithms) {
    SCOPED_TRACE(name);
    Pair p = Make(name, false);
    const bool gcm = std::strstr(name, "GCM") != nullptr;
    const bool xts = std::strstr(name, "XTS") != nullptr;
    const Params gets = Params()
                            .Size(OSSL_CIPHER_PARAM_IVLEN, 1)
                            .Size(OSSL_CIPHER_PARAM_KEYLEN, 2)
                            .Size(OSSL_CIPHER_PARAM_IVLEN, 3);
    EXPECT_EQ(Get(p.ours_ctx.get(), gets), Get(p.theirs_ctx.get(), gets));
    Params sets;
    if (gcm) {
      sets.Size(OSSL_CIPHER_PARAM_AEAD_IVLEN, 13).Size(OSSL_CIPHER_PARAM_AEAD_IVLEN, 14);
    } else if (xts) {
      const size_t key_len =
          static_cast<size_t>(EVP_CIPHER_get_key_length(p.ours.get()));
      sets.Size(OSSL_CIPHER_PARAM_KEYLEN, key_len).Size(OSSL_CIPHER_PARAM_KEYLEN, 1);
    } else {
      sets.Uint(OSSL_CIPHER_PARAM_PADDING, 0).Uint(OSSL_CIPHER_PARAM_PADDING, 1);
    }
    EXPECT_EQ(Set(p.ours_ctx.get(), sets), Set(p.theirs_ctx.get(), sets));
    const Params state = Params()
                             .Size(OSSL_CIPHER_PARAM_IVLEN, 0)
                             .Uint(OSSL_CIPHER_PARAM_PADDING, 9);
    EXPECT_EQ(Get(p.ours_ctx.get(), state), Get(p.theirs_ctx.get(), state))
        << "after the set";
    // An unknown key named twice is ignored everywhere.
    const Params unknown = Params()
                               .Uint("aesmux-no-such-key", 1)
                               .Uint("aesmux-no-such-key", 2);
    EXPECT_EQ(Set(p.ours_ctx.get(), unknown), Set(p.theirs_ctx.get(), unknown));
    EXPECT_EQ(Get(p.ours_ctx.get(), unknown), Get(p.theirs_ctx.get(), unknown));
  }
}

// GCM's keys, one of them failing, in both orders: which of the others
// took effect is the default provider's choice on each version.
TEST_F(ContractVersionsTest, GcmParameterOrderAsTheDefaultProvider) {
  const Bytes tag(16, 0x77);
  for (bool tag_first : {true, false}) {
    SCOPED_TRACE(tag_first ? "the failing tag first" : "the failing tag last");
    Pair p = Make("AES-128-GCM", true);  // encrypting: setting a tag fails
    Params sets;
    if (tag_first) sets.Octets(OSSL_CIPHER_PARAM_AEAD_TAG, tag);
    sets.Size(OSSL_CIPHER_PARAM_AEAD_IVLEN, 13);
    if (!tag_first) sets.Octets(OSSL_CIPHER_PARAM_AEAD_TAG, tag);
    EXPECT_EQ(Set(p.ours_ctx.get(), sets), Set(p.theirs_ctx.get(), sets));
    const Params ivlen = Params().Size(OSSL_CIPHER_PARAM_IVLEN, 0);
    EXPECT_EQ(Get(p.ours_ctx.get(), ivlen), Get(p.theirs_ctx.get(), ivlen));
  }
  for (bool iv_first : {true, false}) {
    SCOPED_TRACE(iv_first ? "the failing IV first" : "the failing IV last");
    Pair p = Make("AES-128-GCM", true, true, false);  // no IV: asking fails
    Params gets;
    if (iv_first) gets.Octets(OSSL_CIPHER_PARAM_IV, Bytes(12));
    gets.Size(OSSL_CIPHER_PARAM_KEYLEN, 0).Size(OSSL_CIPHER_PARAM_AEAD_TAGLEN, 0);
    if (!iv_first) gets.Octets(OSSL_CIPHER_PARAM_IV, Bytes(12));
    EXPECT_EQ(Get(p.ours_ctx.get(), gets), Get(p.theirs_ctx.get(), gets));
  }
}

// The IV as a copy and as a pointer: each answered, with the errors the
// default provider leaves on the queue (from 3.2 its first try of the
// other type leaves one; from 3.6 the type chooses and none is left).
TEST_F(ContractVersionsTest, IvAsACopyOrAPointerAsTheDefaultProvider) {
  for (const char *name : kAlgorithms) {
    if (std::strstr(name, "ECB") != nullptr) continue;
    SCOPED_TRACE(name);
    Pair p = Make(name, true);
    for (const char *key : {OSSL_CIPHER_PARAM_IV, OSSL_CIPHER_PARAM_UPDATED_IV}) {
      SCOPED_TRACE(key);
      const Params copy = Params().Octets(key, Bytes(16, 0xee));
      EXPECT_EQ(Get(p.ours_ctx.get(), copy), Get(p.theirs_ctx.get(), copy));
      const Params pointer = Params().Pointer(key);
      EXPECT_EQ(Get(p.ours_ctx.get(), pointer), Get(p.theirs_ctx.get(), pointer));
      // Neither: fails, with every error the default provider leaves (from
      // 3.6, its parameter code's own reason first).
      std::vector<unsigned long> errors[2];
      EVP_CIPHER_CTX *ctxs[2] = {p.ours_ctx.get(), p.theirs_ctx.get()};
      for (int side = 0; side < 2; ++side) {
        Params wrong = Params().Uint(key, 0);
        ERR_clear_error();
        EXPECT_EQ(EVP_CIPHER_CTX_get_params(ctxs[side], wrong.get()), 0);
        while (unsigned long code = ERR_get_error()) {
          errors[side].push_back(ERR_GET_LIB(code) << 24 | ERR_GET_REASON(code));
        }
      }
      EXPECT_EQ(errors[0], errors[1]);
    }
  }
}

// The tag and the IV asked for with no buffer, and with a short one.
TEST_F(ContractVersionsTest, GcmTagAndIvWithoutABufferAsTheDefaultProvider) {
  for (bool encrypt : {true, false}) {
    SCOPED_TRACE(encrypt ? "encrypting" : "decrypting");
    Pair p = Make("AES-192-GCM", encrypt);
    const Bytes data(20, 0x21);
    Bytes out(64), tag(16, 0x55);
    int len = 0;
    for (EVP_CIPHER_CTX *ctx : {p.ours_ctx.get(), p.theirs_ctx.get()}) {
      ASSERT_EQ(EVP_CipherUpdate(ctx, out.data(), &len, data.data(), 20), 1);
      if (!encrypt) {
        ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag.data()), 1);
      }
      EVP_CipherFinal_ex(ctx, out.data(), &len);
    }
    ERR_clear_error();
    for (size_t size : {0, 12, 16, 17}) {
      SCOPED_TRACE(size);
      for (const char *key : {OSSL_CIPHER_PARAM_AEAD_TAG, OSSL_CIPHER_PARAM_IV,
                              OSSL_CIPHER_PARAM_UPDATED_IV}) {
        SCOPED_TRACE(key);
        const Params none = Params().NoBuffer(key, size);
        EXPECT_EQ(Get(p.ours_ctx.get(), none), Get(p.theirs_ctx.get(), none));
        if (size != 0) {
          const Params some = Params().Octets(key, Bytes(size, 0xee));
          EXPECT_EQ(Get(p.ours_ctx.get(), some), Get(p.theirs_ctx.get(), some));
        }
      }
    }
  }
}

}  // namespace
}  // namespace aesmux::test
