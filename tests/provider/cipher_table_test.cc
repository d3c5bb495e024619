// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The one declaration of aesmux's ciphers (provider/core/algorithm.h:
// kAlgs and kFamilies) against OpenSSL itself: every number core writes
// plainly (NID, EVP_CIPH_*_MODE, lengths, flags) is OpenSSL's, every OID is
// the one OpenSSL gives the NID, and aesmux registers each cipher under
// exactly the names the default provider does.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/provider.h>

#include <set>
#include <string>

#include "provider/core/algorithm.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

using core::AlgInfo;
using core::FamilyInfo;

class CipherTableTest : public ::testing::Test {
 protected:
  ProviderEnv env_;
};

TEST_F(CipherTableTest, EveryRowIsTheDefaultProvidersCipher) {
  for (const AlgInfo &info : core::kAlgs) {
    const std::string name(info.name);
    SCOPED_TRACE(name);
    const FamilyInfo &family = core::Info(info.family);
    const CipherPtr theirs = env_.Default(name);
    ASSERT_NE(theirs, nullptr);
    EXPECT_EQ(EVP_CIPHER_get_nid(theirs.get()), info.nid);
    EXPECT_EQ(EVP_CIPHER_get_mode(theirs.get()), family.mode);
    EXPECT_EQ(EVP_CIPHER_get_key_length(theirs.get()), int(info.key_len));
    EXPECT_EQ(EVP_CIPHER_get_iv_length(theirs.get()), int(family.iv_len));
    EXPECT_EQ(EVP_CIPHER_get_block_size(theirs.get()),
              int(family.block_size));
    const unsigned long flags = EVP_CIPHER_get_flags(theirs.get());
    EXPECT_EQ((flags & EVP_CIPH_FLAG_AEAD_CIPHER) != 0, family.aead);
    EXPECT_EQ((flags & EVP_CIPH_CUSTOM_IV) != 0, family.custom_iv);
    // The kernel crypto API names its templates "<mode>(aes)".
    EXPECT_EQ(family.kernel_name, std::string(family.name) + "(aes)");
  }
}

TEST_F(CipherTableTest, EveryOidIsOpenSslsForTheNid) {
  for (const AlgInfo &info : core::kAlgs) {
    SCOPED_TRACE(std::string(info.name));
    const ASN1_OBJECT *object = OBJ_nid2obj(info.nid);
    ASSERT_NE(object, nullptr);
    if (info.oid.empty()) {
      EXPECT_EQ(OBJ_length(object), 0u) << "OpenSSL has an OID for it";
    } else {
      EXPECT_EQ(OBJ_txt2nid(std::string(info.oid).c_str()), info.nid);
    }
  }
}

// A library context holding one provider alone, so that the names of a
// cipher fetched from it are the names that provider registered (a library
// context's name map joins every provider's names for one algorithm).
class LoneProvider {
 public:
  explicit LoneProvider(const std::string &name_or_path)
      : libctx_(OSSL_LIB_CTX_new()),
        provider_(OSSL_PROVIDER_load(libctx_, name_or_path.c_str())) {}
  ~LoneProvider() {
    if (provider_ != nullptr) OSSL_PROVIDER_unload(provider_);
    OSSL_LIB_CTX_free(libctx_);
  }
  LoneProvider(const LoneProvider &) = delete;
  LoneProvider &operator=(const LoneProvider &) = delete;

  bool loaded() const { return provider_ != nullptr; }

  // Every name the provider's cipher `name` answers to.
  std::set<std::string> NamesOf(const std::string &name) const {
    std::set<std::string> names;
    const CipherPtr cipher(EVP_CIPHER_fetch(libctx_, name.c_str(), nullptr));
    if (cipher == nullptr) return names;
    EVP_CIPHER_names_do_all(
        cipher.get(),
        [](const char *one, void *out) {
          static_cast<std::set<std::string> *>(out)->insert(one);
        },
        &names);
    return names;
  }

 private:
  OSSL_LIB_CTX *libctx_;
  OSSL_PROVIDER *provider_;
};

TEST_F(CipherTableTest, AesmuxRegistersExactlyTheDefaultProvidersNames) {
  const LoneProvider ours(ModulePath());
  const LoneProvider theirs("default");
  ASSERT_TRUE(ours.loaded()) << TakeErrors();
  ASSERT_TRUE(theirs.loaded()) << TakeErrors();
  for (const AlgInfo &info : core::kAlgs) {
    const std::string name(info.name);
    SCOPED_TRACE(name);
    const std::set<std::string> names = theirs.NamesOf(name);
    EXPECT_FALSE(names.empty());
    EXPECT_EQ(ours.NamesOf(name), names);
  }
}

}  // namespace
}  // namespace aesmux::test
