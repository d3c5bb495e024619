// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The aesmux command's view of the provider: aesmux loaded by OpenSSL,
// either as openssl.cnf configures it (what programs get) or in a private
// library context with given settings (for measuring one path), and what it
// reports through OSSL_PROVIDER_get_params. The command reads the
// provider's own answers rather than recomputing them, so the two never
// disagree.
#ifndef AESMUX_PROVIDER_CLI_PROVIDER_HANDLE_H_
#define AESMUX_PROVIDER_CLI_PROVIDER_HANDLE_H_

#include <openssl/evp.h>
#include <openssl/provider.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace aesmux::cli {

struct CipherDeleter {
  void operator()(EVP_CIPHER *cipher) const { EVP_CIPHER_free(cipher); }
};
using CipherPtr = std::unique_ptr<EVP_CIPHER, CipherDeleter>;

class ProviderHandle {
 public:
  // aesmux as the process's openssl.cnf configures it ($OPENSSL_CONF or
  // OpenSSL's default file), loaded by name when the file does not
  // activate it. Null, with OpenSSL's reasons in `error`, if it cannot load.
  static std::unique_ptr<ProviderHandle> Configured(std::string *error);

  // aesmux in a private library context next to the default provider, with
  // `settings` as the lines of its openssl.cnf section and `module` (a path,
  // or "" for aesmux.so from OPENSSL_MODULES or OpenSSL's module directory).
  static std::unique_ptr<ProviderHandle> WithSettings(
      const std::string &module, const std::vector<std::string> &settings,
      std::string *error);

  ~ProviderHandle();
  ProviderHandle(const ProviderHandle &) = delete;
  ProviderHandle &operator=(const ProviderHandle &) = delete;

  // Whether openssl.cnf itself activated aesmux (Configured() only): if
  // not, programs do not use it.
  bool activated_by_config() const { return activated_by_config_; }

  // A provider parameter of aesmux as text; "" when it has none.
  std::string Param(std::string_view key) const;
  // A parameter of several lines ("tiers", "settings"), one item a line.
  std::vector<std::string> ParamLines(std::string_view key) const;

  // The cipher from aesmux or from the default provider, or null.
  CipherPtr Aesmux(std::string_view name) const;
  CipherPtr Default(std::string_view name) const;

 private:
  ProviderHandle() = default;

  OSSL_LIB_CTX *libctx_ = nullptr;  // null: the default library context
  bool owns_libctx_ = false;
  OSSL_PROVIDER *aesmux_ = nullptr;
  OSSL_PROVIDER *default_ = nullptr;
  bool activated_by_config_ = false;
};

// Drains this thread's OpenSSL error queue into text, one error a line.
std::string TakeOpensslErrors();

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_PROVIDER_HANDLE_H_
