// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/support/provider_env.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace aesmux::test {

std::string ModulePath() {
  if (const char *path = std::getenv("AESMUX_TEST_MODULE")) return path;
  return AESMUX_TEST_MODULE_PATH;
}

namespace {

// The directory UseAModuleAnyUserCanLoad made, and the process that made it.
std::string g_module_copy_dir;
pid_t g_module_copy_owner = 0;

void RemoveModuleCopy() {
  if (getpid() != g_module_copy_owner) return;
  std::error_code ignored;
  std::filesystem::remove_all(g_module_copy_dir, ignored);
}

}  // namespace

bool UseAModuleAnyUserCanLoad(std::string *why) {
  if (!g_module_copy_dir.empty()) return true;
  char dir[] = "/tmp/aesmux-module-XXXXXX";
  if (mkdtemp(dir) == nullptr || chmod(dir, 0755) != 0) {
    *why = std::string("cannot make ") + dir + ": " + std::strerror(errno);
    return false;
  }
  g_module_copy_dir = dir;
  g_module_copy_owner = getpid();
  std::atexit(RemoveModuleCopy);
  const std::string copy = g_module_copy_dir + "/aesmux.so";
  std::error_code error;
  std::filesystem::copy_file(ModulePath(), copy, error);
  if (error || chmod(copy.c_str(), 0644) != 0) {
    *why = "cannot copy " + ModulePath() + " to " + copy + ": " +
           (error ? error.message() : std::strerror(errno));
    return false;
  }
  setenv("AESMUX_TEST_MODULE", copy.c_str(), 1);
  return true;
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

ProviderEnv::ProviderEnv(const std::vector<std::string> &settings,
                         StderrAtLoad stderr_at_load) {
  char path[] = "/tmp/aesmux-test-XXXXXX.cnf";
  const int fd = mkstemps(path, 4);
  if (fd >= 0) close(fd);
  const std::string config_path = path;
  {
    std::ofstream cnf(config_path);
    // config_diagnostics: report configuration errors instead of dropping
    // them (OpenSSL 3.0 drops them by default).
    cnf << "config_diagnostics = 1\nopenssl_conf = aesmux_test_init\n"
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
  // OpenSSL 3.0 may drop a provider's activation error from the queue, so
  // also capture what aesmux prints on stderr when it refuses to load.
  std::fflush(stderr);
  FILE *captured = stderr_at_load == kCapture ? std::tmpfile() : nullptr;
  const int saved_stderr = captured != nullptr ? dup(STDERR_FILENO) : -1;
  if (captured != nullptr) dup2(fileno(captured), STDERR_FILENO);
  const bool configured = OSSL_LIB_CTX_load_config(libctx_, config_path.c_str());
  // Read once: gone before anything can end this process without running
  // destructors (forked children of the sandbox and fork tests _exit).
  std::remove(config_path.c_str());
  if (configured && OSSL_PROVIDER_available(libctx_, "aesmux")) {
    default_ = OSSL_PROVIDER_load(libctx_, "default");
    aesmux_ = OSSL_PROVIDER_load(libctx_, "aesmux");
  }
  if (aesmux_ == nullptr) error_ = TakeErrors();
  if (captured != nullptr) {
    std::fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    if (aesmux_ == nullptr) {
      std::rewind(captured);
      char line[512];
      while (std::fgets(line, sizeof(line), captured) != nullptr) {
        error_ += line;
      }
    }
    std::fclose(captured);
  }
}

ProviderEnv::~ProviderEnv() {
  if (aesmux_ != nullptr) OSSL_PROVIDER_unload(aesmux_);
  if (default_ != nullptr) OSSL_PROVIDER_unload(default_);
  OSSL_LIB_CTX_free(libctx_);
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

uint64_t ProviderEnv::Stat(std::string_view alg, std::string_view path,
                           std::string_view field) const {
  return Stat(alg, std::string(path) + "." + std::string(field));
}

uint64_t ProviderEnv::Stat(std::string_view alg, std::string_view field) const {
  const std::string key =
      "stats." + std::string(alg) + "." + std::string(field);
  uint64_t value = ~uint64_t{0};
  OSSL_PARAM params[] = {OSSL_PARAM_uint64(key.c_str(), &value),
                         OSSL_PARAM_END};
  if (aesmux_ == nullptr || !OSSL_PROVIDER_get_params(aesmux_, params)) {
    return ~uint64_t{0};
  }
  return value;
}

}  // namespace aesmux::test
