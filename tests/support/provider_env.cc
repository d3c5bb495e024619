#include "tests/support/provider_env.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

namespace aesmux::test {

std::string ModulePath() {
  if (const char *path = std::getenv("AESMUX_TEST_MODULE")) return path;
  return AESMUX_TEST_MODULE_PATH;
}

std::string TakeErrors() {
  std::string text;
  unsigned long code;
  const char *data = nullptr;
  int flags = 0;
  while ((code = ERR_get_error_all(nullptr, nullptr, nullptr, &data,
                                   &flags)) != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    text += buf;
    if (data != nullptr && (flags & ERR_TXT_STRING) != 0) {
      text += " (";
      text += data;
      text += ")";
    }
    text += "\n";
  }
  return text;
}

int LastErrorReason() { return ERR_GET_REASON(ERR_peek_last_error()); }

ProviderEnv::ProviderEnv(const std::vector<std::string> &settings) {
  char path[] = "/tmp/aesmux-test-XXXXXX.cnf";
  const int fd = mkstemps(path, 4);
  if (fd >= 0) close(fd);
  config_path_ = path;
  {
    std::ofstream cnf(config_path_);
    cnf << "openssl_conf = aesmux_test_init\n"
           "[aesmux_test_init]\nproviders = aesmux_test_providers\n"
           "[aesmux_test_providers]\ndefault = aesmux_test_default\n"
           "aesmux = aesmux_test_aesmux\n"
           "[aesmux_test_default]\nactivate = 1\n"
           "[aesmux_test_aesmux]\nmodule = "
        << ModulePath() << "\nactivate = 1\n";
    for (const std::string &line : settings) cnf << line << "\n";
  }
  libctx_ = OSSL_LIB_CTX_new();
  ERR_clear_error();
  if (!OSSL_LIB_CTX_load_config(libctx_, config_path_.c_str())) {
    error_ = TakeErrors();
    return;
  }
  default_ = OSSL_PROVIDER_load(libctx_, "default");
  aesmux_ = OSSL_PROVIDER_load(libctx_, "aesmux");
  if (aesmux_ == nullptr) error_ = TakeErrors();
}

ProviderEnv::~ProviderEnv() {
  if (aesmux_ != nullptr) OSSL_PROVIDER_unload(aesmux_);
  if (default_ != nullptr) OSSL_PROVIDER_unload(default_);
  OSSL_LIB_CTX_free(libctx_);
  std::remove(config_path_.c_str());
}

CipherPtr ProviderEnv::Aesmux(std::string_view name) const {
  return CipherPtr(EVP_CIPHER_fetch(libctx_, std::string(name).c_str(),
                                    "provider=aesmux"));
}

CipherPtr ProviderEnv::Default(std::string_view name) const {
  return CipherPtr(EVP_CIPHER_fetch(libctx_, std::string(name).c_str(),
                                    "provider=default"));
}

std::string ProviderEnv::ProviderParam(const char *key) const {
  if (aesmux_ == nullptr) return {};
  OSSL_PARAM probe[] = {OSSL_PARAM_utf8_string(key, nullptr, 0),
                        OSSL_PARAM_END};
  const char *pointer = nullptr;
  OSSL_PARAM as_pointer[] = {
      OSSL_PARAM_utf8_ptr(key, const_cast<char **>(&pointer), 0),
      OSSL_PARAM_END};
  if (OSSL_PROVIDER_get_params(aesmux_, as_pointer) && pointer != nullptr) {
    return pointer;
  }
  // A string parameter: ask for its size, then for its value.
  if (!OSSL_PROVIDER_get_params(aesmux_, probe)) return {};
  std::vector<char> buffer(probe[0].return_size + 1);
  OSSL_PARAM fetch[] = {
      OSSL_PARAM_utf8_string(key, buffer.data(), buffer.size()),
      OSSL_PARAM_END};
  if (!OSSL_PROVIDER_get_params(aesmux_, fetch)) return {};
  return std::string(buffer.data());
}

}  // namespace aesmux::test
