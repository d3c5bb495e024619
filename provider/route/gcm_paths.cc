#include "provider/route/gcm_paths.h"

#include <openssl/err.h>

#include <new>

namespace aesmux::route {
namespace {

std::unique_ptr<CpuGcm> OutOfMemory() {
  ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
  return nullptr;
}

}  // namespace

std::unique_ptr<CpuGcm> SimdGcmPath::Clone() const {
  std::unique_ptr<SimdGcmPath> copy(new (std::nothrow) SimdGcmPath(*this));
  return copy != nullptr && copy->keyed() ? std::move(copy) : OutOfMemory();
}

std::unique_ptr<CpuGcm> FallbackGcmPath::Clone() const {
  std::unique_ptr<FallbackGcmPath> copy(
      new (std::nothrow) FallbackGcmPath(*library_, alg_, key_.bytes()));
  if (copy == nullptr) return OutOfMemory();
  // The default provider's dupctx failing raises nothing here, as the
  // engine's copy of its fallback context never did.
  if (!copy->context_.CopyFrom(context_)) return nullptr;
  return copy;
}

}  // namespace aesmux::route
