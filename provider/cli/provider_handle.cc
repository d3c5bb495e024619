// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/provider_handle.h"

#include <openssl/conf.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

namespace aesmux::cli {

std::string TakeOpensslErrors() {
  std::string text;
  unsigned long code;
  const char *data = nullptr;
  int flags = 0;
  while ((code = ERR_get_error_all(nullptr, nullptr, nullptr, &data,
                                   &flags)) != 0) {
    char line[256];
    ERR_error_string_n(code, line, sizeof(line));
    text += line;
    if (data != nullptr && (flags & ERR_TXT_STRING) != 0) {
      text += std::string(" (") + data + ")";
    }
    text += "\n";
  }
  return text;
}

namespace {

// aesmux's section of the openssl.cnf that OpenSSL reads, when that file
// lists aesmux among its providers (openssl_conf -> providers -> aesmux),
// whether or not it loaded.
struct ListedSection {
  std::string file;
  std::vector<std::pair<std::string, std::string>> entries;  // key, value
};

std::optional<ListedSection> ConfigListsAesmux() {
  char *path = CONF_get1_default_config_file();
  CONF *conf = NCONF_new(nullptr);
  std::optional<ListedSection> listed;
  if (path != nullptr && conf != nullptr && NCONF_load(conf, path, nullptr)) {
    const char *init = NCONF_get_string(conf, nullptr, "openssl_conf");
    const char *providers =
        init != nullptr ? NCONF_get_string(conf, init, "providers") : nullptr;
    const char *section =
        providers != nullptr ? NCONF_get_string(conf, providers, "aesmux")
                             : nullptr;
    if (section != nullptr) {
      listed = ListedSection{path, {}};
      STACK_OF(CONF_VALUE) *values = NCONF_get_section(conf, section);
      for (int i = 0; i < sk_CONF_VALUE_num(values); ++i) {
        const CONF_VALUE *value = sk_CONF_VALUE_value(values, i);
        listed->entries.emplace_back(value->name, value->value);
      }
    }
  }
  NCONF_free(conf);
  OPENSSL_free(path);
  ERR_clear_error();  // a missing key is an error on the queue
  return listed;
}

// `value` as openssl.cnf spells it: a backslash before each character the
// parser would take for a quote, an escape, a comment or a variable.
std::string CnfValue(const std::string &value) {
  std::string spelt;
  for (char c : value) {
    if (c == '\\' || c == '"' || c == '\'' || c == '#' || c == '$') {
      spelt += '\\';
    }
    spelt += c;
  }
  return spelt;
}

// Why aesmux did not load from `listed`: OpenSSL drops the reasons of a
// provider that failed to load from openssl.cnf (the loader's message for
// a wrong module path; aesmux's own, which it also printed on stderr), so
// aesmux is loaded again in a private library context from the same
// section, by name, which keeps them on the error queue.
std::string WhyNotLoaded(const ListedSection &listed) {
  const char *tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir != nullptr ? tmpdir : "/tmp") +
                     "/aesmux-info-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return "(cannot create a temporary openssl.cnf to see why)\n";
  close(fd);
  {
    std::ofstream cnf(path);
    cnf << "openssl_conf = init\n[init]\nproviders = providers\n"
           "[providers]\naesmux = aesmux_sect\n[aesmux_sect]\n";
    // Not activated: OpenSSL keeps the module path and the settings for a
    // load by name.
    for (const auto &[key, value] : listed.entries) {
      if (key != "activate") cnf << key << " = " << CnfValue(value) << "\n";
    }
  }
  OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new();
  const bool configured = OSSL_LIB_CTX_load_config(libctx, path.c_str());
  std::remove(path.c_str());
  ERR_clear_error();
  std::string why;
  if (!configured) {
    why = "(cannot load aesmux's section again to see why)\n";
  } else if (OSSL_PROVIDER *aesmux = OSSL_PROVIDER_load(libctx, "aesmux")) {
    why = "(it loads from the same section in this process now)\n";
    OSSL_PROVIDER_unload(aesmux);
  } else {
    why = TakeOpensslErrors();
  }
  OSSL_LIB_CTX_free(libctx);
  return why;
}

}  // namespace

std::unique_ptr<ProviderHandle> ProviderHandle::Configured(std::string *error) {
  std::unique_ptr<ProviderHandle> handle(new ProviderHandle);
  // Loads openssl.cnf as any program would, and sees whether it activated
  // aesmux before asking for it by name.
  OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, nullptr);
  handle->activated_by_config_ = OSSL_PROVIDER_available(nullptr, "aesmux");
  if (!handle->activated_by_config_) {
    if (const std::optional<ListedSection> listed = ConfigListsAesmux()) {
      // Loading it by name now would show default settings, not the ones
      // that failed.
      *error = "openssl.cnf (" + listed->file +
               ") lists aesmux, but it did not load; loaded again from the "
               "same section, it says:\n" +
               WhyNotLoaded(*listed);
      return nullptr;
    }
  }
  handle->aesmux_ = OSSL_PROVIDER_load(nullptr, "aesmux");
  handle->default_ = OSSL_PROVIDER_load(nullptr, "default");
  if (handle->aesmux_ == nullptr || handle->default_ == nullptr) {
    *error = "OpenSSL could not load aesmux (it is not in OpenSSL's module "
             "directory, `openssl version -m`, nor in OPENSSL_MODULES):\n" +
             TakeOpensslErrors();
    return nullptr;
  }
  return handle;
}

std::unique_ptr<ProviderHandle> ProviderHandle::WithSettings(
    const std::string &module, const std::vector<std::string> &settings,
    std::string *error) {
  const char *tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir != nullptr ? tmpdir : "/tmp") +
                     "/aesmux-cli-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    *error = "cannot create a temporary openssl.cnf in " + path;
    return nullptr;
  }
  close(fd);
  {
    std::ofstream cnf(path);
    cnf << "config_diagnostics = 1\nopenssl_conf = aesmux_cli_init\n"
           "[aesmux_cli_init]\nproviders = aesmux_cli_providers\n"
           "[aesmux_cli_providers]\ndefault = aesmux_cli_default\n"
           "aesmux = aesmux_cli_aesmux\n"
           "[aesmux_cli_default]\nactivate = 1\n"
           "[aesmux_cli_aesmux]\nactivate = 1\n";
    if (!module.empty()) cnf << "module = " << module << "\n";
    for (const std::string &line : settings) cnf << line << "\n";
  }
  std::unique_ptr<ProviderHandle> handle(new ProviderHandle);
  handle->libctx_ = OSSL_LIB_CTX_new();
  handle->owns_libctx_ = true;
  const bool configured =
      OSSL_LIB_CTX_load_config(handle->libctx_, path.c_str());
  std::remove(path.c_str());
  if (configured && OSSL_PROVIDER_available(handle->libctx_, "aesmux")) {
    handle->aesmux_ = OSSL_PROVIDER_load(handle->libctx_, "aesmux");
    handle->default_ = OSSL_PROVIDER_load(handle->libctx_, "default");
  }
  if (handle->aesmux_ == nullptr || handle->default_ == nullptr) {
    *error = TakeOpensslErrors();
    return nullptr;
  }
  return handle;
}

ProviderHandle::~ProviderHandle() {
  if (aesmux_ != nullptr) OSSL_PROVIDER_unload(aesmux_);
  if (default_ != nullptr) OSSL_PROVIDER_unload(default_);
  if (owns_libctx_) OSSL_LIB_CTX_free(libctx_);
}

std::string ProviderHandle::Param(std::string_view key) const {
  const std::string name(key);
  // The size first, then the text: works for pointer and string
  // parameters alike (the provider answers either way).
  OSSL_PARAM probe[] = {OSSL_PARAM_utf8_string(name.c_str(), nullptr, 0),
                        OSSL_PARAM_END};
  if (!OSSL_PROVIDER_get_params(aesmux_, probe) ||
      !OSSL_PARAM_modified(probe)) {
    return "";
  }
  std::string value(probe[0].return_size + 1, '\0');
  OSSL_PARAM fetch[] = {
      OSSL_PARAM_utf8_string(name.c_str(), value.data(), value.size()),
      OSSL_PARAM_END};
  if (!OSSL_PROVIDER_get_params(aesmux_, fetch)) return "";
  value.resize(fetch[0].return_size);
  return value;
}

std::vector<std::string> ProviderHandle::ParamLines(std::string_view key) const {
  std::vector<std::string> lines;
  std::istringstream in(Param(key));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

CipherPtr ProviderHandle::Aesmux(std::string_view name) const {
  return CipherPtr(EVP_CIPHER_fetch(libctx_, std::string(name).c_str(),
                                    "provider=aesmux"));
}

CipherPtr ProviderHandle::Default(std::string_view name) const {
  return CipherPtr(EVP_CIPHER_fetch(libctx_, std::string(name).c_str(),
                                    "provider=default"));
}

}  // namespace aesmux::cli
