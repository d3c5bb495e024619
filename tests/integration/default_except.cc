// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// default_except.so: OpenSSL's default provider without the ciphers named in
// its openssl.cnf section, for the integration tests.
//
// A program that loads it next to aesmux (and not the default provider) can
// fetch an excepted cipher from aesmux only, while every other algorithm
// (digests, HMAC, the TLS KDFs, key exchange, signatures, encoders, the
// DRBG, the stitched AES-CBC-HMAC ciphers) still comes from the default
// provider's code. A property query cannot say that: `provider=aesmux` in
// default_properties would also exclude SHA-256 and RSA.
//
//   [default_except_sect]
//   module = /path/to/default_except.so
//   activate = 1
//   except = AES-128-CBC AES-256-GCM ...
//
// `except` lists cipher names (space or colon separated, any of a cipher's
// names, case-insensitive); an implementation is left out if one of its
// names is listed. Nothing is left out without the key.
//
// The default provider runs in a private library context; its provider
// context stands in for this provider's, so its algorithms work unchanged
// (their own fetches, such as the DRBG's AES-256-CTR, go to that private
// context and never reach aesmux). One instance per process at a time.
#include <openssl/core_dispatch.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include <cstdio>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct CaseInsensitiveLess {
  bool operator()(const std::string &a, const std::string &b) const {
    return OPENSSL_strcasecmp(a.c_str(), b.c_str()) < 0;
  }
};
using NameSet = std::set<std::string, CaseInsensitiveLess>;

struct Instance {
  OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new();
  OSSL_PROVIDER *inner = nullptr;
  std::vector<OSSL_ALGORITHM> ciphers;  // the kept ones, then a null entry

  ~Instance() {
    if (inner != nullptr) OSSL_PROVIDER_unload(inner);
    OSSL_LIB_CTX_free(libctx);
  }
};
// A plain pointer: no static destructor may run before OpenSSL's own
// clean-up at exit, which calls Teardown().
Instance *g_instance = nullptr;

// Splits "A B:C" into {A, B, C}.
NameSet SplitNames(std::string_view list) {
  NameSet names;
  size_t start = 0;
  while (start < list.size()) {
    const size_t end = list.find_first_of(" :\t", start);
    const size_t stop = end == std::string_view::npos ? list.size() : end;
    if (stop > start) names.emplace(list.substr(start, stop - start));
    start = stop + 1;
  }
  return names;
}

bool Excepted(const OSSL_ALGORITHM &algorithm, const NameSet &except) {
  for (const std::string &name : SplitNames(algorithm.algorithm_names)) {
    if (except.count(name) != 0) return true;
  }
  return false;
}

void Teardown(void *) noexcept {
  delete g_instance;
  g_instance = nullptr;
}

const OSSL_PARAM *GettableParams(void *) noexcept {
  return OSSL_PROVIDER_gettable_params(g_instance->inner);
}

int GetParams(void *, OSSL_PARAM params[]) noexcept {
  return OSSL_PROVIDER_get_params(g_instance->inner, params);
}

const OSSL_ALGORITHM *QueryOperation(void *, int operation_id,
                                     int *no_cache) noexcept {
  if (operation_id == OSSL_OP_CIPHER) {
    *no_cache = 0;
    return g_instance->ciphers.data();
  }
  return OSSL_PROVIDER_query_operation(g_instance->inner, operation_id,
                                       no_cache);
}

void UnqueryOperation(void *, int operation_id,
                      const OSSL_ALGORITHM *algorithms) noexcept {
  if (operation_id == OSSL_OP_CIPHER) return;
  OSSL_PROVIDER_unquery_operation(g_instance->inner, operation_id,
                                  algorithms);
}

// libssl learns the TLS groups and signature algorithms from here.
int GetCapabilities(void *, const char *capability, OSSL_CALLBACK *callback,
                    void *arg) noexcept {
  return OSSL_PROVIDER_get_capabilities(g_instance->inner, capability,
                                        callback, arg);
}

template <typename Fn>
void (*DispatchFn(Fn *fn))(void) {
  return reinterpret_cast<void (*)(void)>(fn);
}

const OSSL_DISPATCH kDispatch[] = {
    {OSSL_FUNC_PROVIDER_TEARDOWN, DispatchFn(Teardown)},
    {OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, DispatchFn(GettableParams)},
    {OSSL_FUNC_PROVIDER_GET_PARAMS, DispatchFn(GetParams)},
    {OSSL_FUNC_PROVIDER_QUERY_OPERATION, DispatchFn(QueryOperation)},
    {OSSL_FUNC_PROVIDER_UNQUERY_OPERATION, DispatchFn(UnqueryOperation)},
    {OSSL_FUNC_PROVIDER_GET_CAPABILITIES, DispatchFn(GetCapabilities)},
    {0, nullptr}};

std::string ExceptList(const OSSL_CORE_HANDLE *handle,
                       const OSSL_DISPATCH *in) {
  for (; in->function_id != 0; ++in) {
    if (in->function_id != OSSL_FUNC_CORE_GET_PARAMS) continue;
    const char *value = nullptr;
    OSSL_PARAM params[] = {
        OSSL_PARAM_utf8_ptr("except", const_cast<char **>(&value), 0),
        OSSL_PARAM_END};
    if (OSSL_FUNC_core_get_params(in)(handle, params) && value != nullptr) {
      return value;
    }
  }
  return {};
}

int Init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
         const OSSL_DISPATCH **out, void **provctx) {
  if (g_instance != nullptr) {
    std::fprintf(stderr, "default_except: one instance per process\n");
    return 0;
  }
  const NameSet except = SplitNames(ExceptList(handle, in));
  auto instance = std::make_unique<Instance>();
  if (instance->libctx == nullptr) return 0;
  instance->inner = OSSL_PROVIDER_load(instance->libctx, "default");
  if (instance->inner == nullptr) return 0;
  int no_cache = 0;
  const OSSL_ALGORITHM *all =
      OSSL_PROVIDER_query_operation(instance->inner, OSSL_OP_CIPHER, &no_cache);
  for (const OSSL_ALGORITHM *a = all; a != nullptr && a->algorithm_names;
       ++a) {
    if (!Excepted(*a, except)) instance->ciphers.push_back(*a);
  }
  OSSL_PROVIDER_unquery_operation(instance->inner, OSSL_OP_CIPHER, all);
  instance->ciphers.push_back({nullptr, nullptr, nullptr, nullptr});
  *provctx = OSSL_PROVIDER_get0_provider_ctx(instance->inner);
  *out = kDispatch;
  g_instance = instance.release();
  return 1;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int OSSL_provider_init(
    const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
    const OSSL_DISPATCH **out, void **provctx) noexcept {
  try {
    return Init(handle, in, out, provctx);
  } catch (const std::bad_alloc &) {
    return 0;
  }
}
