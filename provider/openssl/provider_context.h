// The state of one loaded aesmux provider instance (one per library context
// that loads it): its settings-bound router and its fallback library.
#ifndef AESMUX_PROVIDER_OPENSSL_PROVIDER_CONTEXT_H_
#define AESMUX_PROVIDER_OPENSSL_PROVIDER_CONTEXT_H_

#include <openssl/core.h>

#include <memory>

#include "provider/fallback/fallback.h"
#include "provider/route/router.h"

namespace aesmux::openssl {

struct ProviderContext {
  ProviderContext(const OSSL_CORE_HANDLE *core_handle,
                  std::unique_ptr<fallback::FallbackLibrary> fallback_library,
                  route::Settings settings)
      : handle(core_handle),
        fallback(std::move(fallback_library)),
        router(std::move(settings), fallback.get()) {}

  const OSSL_CORE_HANDLE *handle;
  std::unique_ptr<fallback::FallbackLibrary> fallback;
  route::Router router;
};

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_PROVIDER_CONTEXT_H_
