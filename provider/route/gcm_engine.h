// GcmEngine: one AES-GCM key, ready on every path, serving messages.
//
// Unlike the block modes, a GCM message carries hidden state (the GHASH
// accumulator) from its first byte to its tag, so a whole message runs on
// one path. The router decides when the message's first payload arrives,
// with the length of that payload plus the AAD seen so far; until then the
// AAD is buffered. When the decision cannot depend on the length (the
// default settings), the message is routed at Start() and nothing is
// buffered.
#ifndef AESMUX_PROVIDER_ROUTE_GCM_ENGINE_H_
#define AESMUX_PROVIDER_ROUTE_GCM_ENGINE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kernels/simd_gcm.h"
#include "provider/fallback/fallback.h"
#include "provider/route/algorithm.h"
#include "provider/route/raw_key.h"
#include "provider/route/router.h"

namespace aesmux::route {

class GcmEngine {
 public:
  GcmEngine(const Router &router, Alg alg) : router_(&router), alg_(alg) {}
  GcmEngine(const GcmEngine &) = delete;
  GcmEngine &operator=(const GcmEngine &) = delete;

  // Makes this a deep copy of `other`, mid-message state included.
  bool CopyFrom(const GcmEngine &other);

  void SetKey(std::span<const uint8_t> key);
  bool has_key() const { return !key_.empty(); }

  // Begins a message; `iv` is 1..128 bytes.
  bool Start(Direction direction, std::span<const uint8_t> iv);
  // Each returns false when the message cannot go on: AAD after payload,
  // a length beyond GCM's limits, or a failure of the fallback path.
  bool Aad(std::span<const uint8_t> aad);
  bool Crypt(uint8_t *out, const uint8_t *in, size_t len);
  // Encrypting: writes the 16-byte tag. Decrypting: returns whether the first
  // `tag_len` bytes of `tag` match (compared in constant time); if they do
  // not, the message is not over: like the default provider's, it goes on
  // with further Crypt calls, and Finish may be called again.
  bool Finish(uint8_t tag[16], size_t tag_len);

 private:
  // Routes the current message and replays the buffered AAD to its path.
  bool Route(uint64_t len);
  bool FeedAad(std::span<const uint8_t> aad);

  const Router *router_;
  Alg alg_;
  RawKey key_;
  kernels::SimdGcm simd_;
  fallback::FallbackContext fallback_;

  // The current message.
  Direction direction_ = Direction::kEncrypt;
  std::array<uint8_t, 128> iv_{};
  size_t iv_len_ = 0;
  std::optional<Path> path_;     // unset until routed
  std::vector<uint8_t> pending_aad_;
  uint64_t message_bytes_ = 0;
};

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_GCM_ENGINE_H_
