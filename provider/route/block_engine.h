// BlockEngine: one key of an ECB, CBC, CTR or XTS algorithm, ready on every
// path, serving requests the router sends to any of them.
//
// A request carries all of its chaining state (CBC IV, CTR counter), so
// consecutive requests of one stream may run on different paths. The raw
// key is kept (and wiped on destruction) so the fallback path can be keyed
// lazily (the afalg path too) and the decryption schedule built when the
// direction changes.
//
// A request the afalg path fails is run again, whole, on the CPU's path,
// from its original input: an in-place request (an output overlapping an
// input) is first copied to a staging buffer that the kernel only reads,
// so the caller's buffer may be overwritten by a failed kernel request
// without losing the input. The copy costs a memcpy of the request
// (BENCHMARKS.md measures it); if there is no memory for it, the request
// goes to the CPU's path instead (a `setup` hand-off).
#ifndef AESMUX_PROVIDER_ROUTE_BLOCK_ENGINE_H_
#define AESMUX_PROVIDER_ROUTE_BLOCK_ENGINE_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/block_engine.h belongs to a layer above the one that includes it"
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/simd_key.h"
#include "provider/afalg/afalg.h"
#include "provider/batch/cbc_batch.h"
#include "provider/fallback/fallback.h"
#include "provider/core/algorithm.h"
#include "provider/core/boxed.h"
#include "provider/route/router.h"
#include "provider/route/scratch_buffer.h"
#include "provider/core/stats.h"

namespace aesmux::route {

// One stream of a CBC pipeline: whole blocks, `iv` in/out.
struct PipeRequest {
  uint8_t *iv;
  uint8_t *out;
  const uint8_t *in;
  size_t len;
};

class BlockEngine {
 public:
  BlockEngine(const Router &router, Alg alg);
  ~BlockEngine();
  // A deep copy (dupctx), member by member: each member copies itself,
  // the paths' states included (a kernel key is shared, nothing queued or
  // staged is copied). Throws std::bad_alloc if memory runs out.
  BlockEngine(const BlockEngine &) = default;
  BlockEngine &operator=(const BlockEngine &) = delete;

  // Sets the key; its length is the algorithm's key length. Cancels what
  // CancelQueued() cancels.
  void SetKey(std::span<const uint8_t> key);
  bool has_key() const { return simd_.has_key(); }

  // Cancels a request that a paused ASYNC job left queued (in a
  // multi-buffer batch or an io_uring ring) and never came back for: the
  // caller is re-initialising the context, which the abandoned request
  // would otherwise still write into. The destructor does the same.
  void CancelQueued();

  // Serves one request.
  // ECB, CBC: every segment is whole blocks; `iv` is the CBC chaining value
  //   (in/out), unused for ECB.
  // CTR: `iv` is the counter (in/out); segments are whole blocks except that
  //   the last may end in a partial block, whose keystream block is written
  //   to `keystream` (the counter then points past it).
  // XTS: one segment, one data unit of 16 bytes to 16 MiB; `iv` the tweak.
  // Returns false, with OpenSSL's error on the queue, only if the request
  // could not be served by any path; the output is then unspecified but the
  // input is untouched unless it is also the output.
  bool Run(Direction direction, uint8_t *iv,
           std::span<const Segment> segments, uint8_t *keystream = nullptr);

  // CBC encryption of several independent streams under this key (the
  // cipher pipeline API), in multi-buffer lanes when there is a tier.
  bool RunCbcEncryptPipes(std::span<const PipeRequest> pipes);

  // Run() for one ECB or CBC segment of whole blocks, the shape of every
  // short update, without the general case's loops and spans: at 16 bytes
  // an update is mostly this overhead (32 instructions fewer per call; a
  // CBC encryption that may be batched takes 359 instead of 405 through
  // EVP, callgrind on aesni). Requests for the afalg path or the fallback
  // path take Run().
  bool RunWholeBlocks(Direction direction, uint8_t *iv, uint8_t *out,
                      const uint8_t *in, size_t len) {
    const bool encrypt = direction == Direction::kEncrypt;
    const bool cbc = family_ == Family::kCbc;
    if (len < simd_min_len_ || len >= afalg_min_len_ || !simd_.is_set()) {
      const Segment segment{out, in, len};
      return Run(direction, iv, std::span(&segment, 1));
    }
    if (cbc && encrypt && len >= mb_min_len_ && len <= mb_max_len_ &&
        mb_tier_ != nullptr) {
      return EncryptCbcBatched(iv, out, in, len);
    }
    if (cbc) {
      encrypt ? simd_.CbcEncrypt(iv, out, in, len)
              : simd_.CbcDecrypt(iv, out, in, len);
    } else {
      encrypt ? simd_.EcbEncrypt(out, in, len)
              : simd_.EcbDecrypt(out, in, len);
    }
    CountRequest(alg_, Path::kSimd, len);
    return true;
  }

 private:
  // Runs on the afalg path; false (with the hand-off counted) if it did not
  // serve the request, `segments` then pointing at the request's intact
  // input (staged if it was in place).
  bool RunAfalg(Direction direction, uint8_t *iv,
                std::span<const Segment> &segments, uint8_t *keystream,
                uint64_t total);
  void RunSimd(Direction direction, uint8_t *iv, const Segment &segment,
               uint8_t *keystream);
  // A CBC encryption on the kernels, batched with concurrent streams when
  // there are any (batch::EncryptCbc counts it).
  bool EncryptCbcBatched(uint8_t *iv, uint8_t *out, const uint8_t *in,
                         size_t len);
  // Out of line: the fallback path is the rare one.
  [[gnu::noinline]] bool RunFallback(Direction direction, uint8_t *iv,
                                     std::span<const Segment> segments,
                                     uint8_t *keystream);

  // The key as the application gave it, for the paths keyed from it:
  // assembled from the kernels' schedules (or kept as it is in simd_ when
  // there is no tier), so that no context holds a second copy. Wiped when
  // it goes out of scope.
  struct KeyCopy {
    explicit KeyCopy(const BlockEngine &engine);
    ~KeyCopy();
    KeyCopy(const KeyCopy &) = delete;
    KeyCopy &operator=(const KeyCopy &) = delete;
    std::span<const uint8_t> bytes() const { return {buffer, len}; }
    uint8_t buffer[64];
    size_t len;
  };

  const Router *router_;
  Alg alg_;
  Family family_;
  // Requests of at least this many bytes run on the kernels (when there is
  // a tier): the router's decision, precomputed for this algorithm.
  uint64_t simd_min_len_ = ~uint64_t{0};
  // Requests of at least this many bytes may go to the afalg path.
  uint64_t afalg_min_len_ = ~uint64_t{0};
  // CBC encryptions of at most this many bytes may join multi-buffer
  // batches on `mb_tier_` (0, or no tier: never), from mb_min_len_ bytes.
  uint64_t mb_min_len_ = 0;
  uint64_t mb_max_len_ = 0;
  const kernels::mb::MbTier *mb_tier_ = nullptr;
  // What only some contexts use exists once they use it (BENCHMARKS.md,
  // "Memory per keyed context"): XTS's tweak key, and each path's state
  // but the kernels'.
  core::Boxed<kernels::XtsTweakKey> xts_tweak_;
  core::Boxed<fallback::FallbackContext> fallback_;
  // The afalg path's: the kernel key (a copy shares it) and in-place
  // requests' inputs, staged (a copy has nothing staged).
  struct AfalgState {
    AfalgState() = default;
    AfalgState(const AfalgState &other) { key.ShareFrom(other.key); }
    afalg::Key key;
    ScratchBuffer staging;
    std::array<Segment, 4> staged_segments{};
  };
  core::Boxed<AfalgState> afalg_;
  // A CBC encryption left in a multi-buffer batch (a copy has none).
  struct BatchState {
    BatchState() = default;
    BatchState(const BatchState &) {}
    batch::QueuedRequest queued;
  };
  core::Boxed<BatchState> batch_;
  // ECB, CBC, CTR; XTS's data key (the whole key when XTS has no tier).
  // Last, and [[no_unique_address]]: the members of whatever holds the
  // engine go into its tail padding (BENCHMARKS.md, "Memory per keyed
  // context").
  [[no_unique_address]] kernels::SimdKey simd_;
};

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_BLOCK_ENGINE_H_
