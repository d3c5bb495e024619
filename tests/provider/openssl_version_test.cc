// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Which OpenSSL the tests run on. scripts/test-openssl.sh builds aesmux and
// its suites against OpenSSL 3.5 and 3.6 headers and libraries: these tests
// fail unless the process runs on the libcrypto the build linked (one copy
// of it, the same version as the headers) and the default provider the
// suites compare aesmux with is that libcrypto's own. Each prints what it
// found.
#include <gtest/gtest.h>
#include <link.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

// The paths of the loaded objects whose file name starts with `prefix`.
std::vector<std::string> LoadedObjects(const std::string &prefix) {
  struct Search {
    std::string prefix;
    std::vector<std::string> found;
  } search{prefix, {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *s = static_cast<Search *>(data);
        const std::string path = info->dlpi_name ? info->dlpi_name : "";
        if (std::filesystem::path(path).filename().string().starts_with(
                s->prefix)) {
          s->found.push_back(path);
        }
        return 0;
      },
      &search);
  return search.found;
}

std::string Canonical(const std::string &path) {
  std::error_code error;
  const auto canonical = std::filesystem::canonical(path, error);
  return error ? path : canonical.string();
}

// The same major and minor version: a later patch release of the library
// than of the headers is ABI compatible (Debian may update libssl3 first).
TEST(OpenSslVersion, RuntimeIsTheHeadersSeries) {
  std::printf("OpenSSL headers: %s\nOpenSSL library: %s\n",
              OPENSSL_VERSION_TEXT, OpenSSL_version(OPENSSL_VERSION));
  EXPECT_EQ(OPENSSL_version_major(), unsigned{OPENSSL_VERSION_MAJOR});
  EXPECT_EQ(OPENSSL_version_minor(), unsigned{OPENSSL_VERSION_MINOR});
  EXPECT_GE(OPENSSL_version_patch(), unsigned{OPENSSL_VERSION_PATCH});
}

TEST(OpenSslVersion, OneLibcryptoTheOneLinked) {
  ProviderEnv env;  // aesmux.so loaded too: its libcrypto must be this one
  ASSERT_TRUE(env.loaded()) << env.error();
  const std::vector<std::string> found = LoadedObjects("libcrypto.so");
  ASSERT_EQ(found.size(), 1u) << "libcrypto loaded " << found.size()
                              << " times (or not at all)";
  std::printf("libcrypto: %s\n", Canonical(found[0]).c_str());
  EXPECT_EQ(Canonical(found[0]), Canonical(AESMUX_TEST_LIBCRYPTO))
      << "the tests run on another libcrypto than the build linked";
}

TEST(OpenSslVersion, DefaultProviderIsTheLibrarys) {
  ProviderEnv env;
  ASSERT_TRUE(env.loaded()) << env.error();
  OSSL_PROVIDER *provider = OSSL_PROVIDER_load(env.libctx(), "default");
  ASSERT_NE(provider, nullptr);
  const char *version = nullptr;
  const char *name = nullptr;
  OSSL_PARAM params[] = {
      OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_VERSION, &version, 0),
      OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_NAME, &name, 0), OSSL_PARAM_END};
  ASSERT_TRUE(OSSL_PROVIDER_get_params(provider, params));
  ASSERT_NE(version, nullptr);
  std::printf("default provider: %s %s\n", name ? name : "?", version);
  EXPECT_STREQ(version, OpenSSL_version(OPENSSL_VERSION_STRING));
  // The ciphers the suites compare with are that provider's.
  CipherPtr cipher = env.Default("AES-128-GCM");
  ASSERT_NE(cipher, nullptr);
  EXPECT_EQ(EVP_CIPHER_get0_provider(cipher.get()), provider);
  OSSL_PROVIDER_unload(provider);
}

}  // namespace
}  // namespace aesmux::test
