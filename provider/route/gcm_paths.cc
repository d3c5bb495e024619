// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
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

SimdGcmPath::Block SimdGcmPath::AllocateBlock(const kernels::Tier &tier) {
  constexpr std::align_val_t kAlign{alignof(aesmux_gcm_key)};
  static_assert(alignof(aesmux_gcm_key) % alignof(SimdGcmPath) == 0);
  const size_t object_offset =
      (tier.gcm_key_bytes + alignof(SimdGcmPath) - 1) &
      ~(alignof(SimdGcmPath) - 1);
  void *block = ::operator new(object_offset + sizeof(SimdGcmPath), kAlign,
                               std::nothrow);
  if (block == nullptr) return {nullptr, nullptr};
  return {static_cast<aesmux_gcm_key *>(block),
          static_cast<uint8_t *>(block) + object_offset};
}

std::unique_ptr<SimdGcmPath> SimdGcmPath::Make(const kernels::Tier &tier,
                                               std::span<const uint8_t> key) {
  const Block block = AllocateBlock(tier);
  if (block.key == nullptr) return nullptr;
  return std::unique_ptr<SimdGcmPath>(
      ::new (block.object) SimdGcmPath(tier, key, block.key));
}

// The block begins with the GHASH key: the SimdGcm hands it back (wiped)
// rather than freeing, in its destructor, the block it lies in.
void SimdGcmPath::operator delete(SimdGcmPath *path,
                                  std::destroying_delete_t) {
  void *block = path->gcm_.ReleaseKeyStorage();
  path->~SimdGcmPath();
  ::operator delete(block, std::align_val_t{alignof(aesmux_gcm_key)});
}

std::unique_ptr<CpuGcm> SimdGcmPath::Clone() const {
  const Block block = AllocateBlock(*gcm_.tier());
  if (block.key == nullptr) return OutOfMemory();
  return std::unique_ptr<CpuGcm>(
      ::new (block.object) SimdGcmPath(*this, block.key));
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
