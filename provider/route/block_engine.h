// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
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
// so the caller's buffer may be overwritten by a run that fails part-way
// (a run longer than one kernel request takes several, and each request's
// output is written when it completes) without losing the input. The copy costs
// a memcpy of the request (BENCHMARKS.md measures it); if there is no memory
// for it, the request goes to the CPU's path instead (a `setup` hand-off).
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
  // short update, without the general case's loops and spans, which would
  // be most of a 16-byte update's cost beside the kernel (BENCHMARKS.md,
  // "Instructions per record"). Requests for the afalg path or the
  // fallback path take Run().
  bool RunWholeBlocks(Direction direction, uint8_t *iv, uint8_t *out,
                      const uint8_t *in, size_t len) {
    if (!route_.PlainSimd(len)) [[unlikely]] {
      return RouteWholeBlocks(direction, iv, out, in, len);
    }
    BlocksOnSimd(direction, iv, out, in, len);
    route_.Served(Path::kSimd, len);
    return true;
  }

  // RunWholeBlocks() for an ECB or CBC decryption that has one block in
  // front of `in`: the block a padded decryption held back from the last
  // update (`held`, 16 bytes), then `len` bytes of whole blocks; the
  // output, 16 + len bytes, goes to `out`, which overlaps neither input.
  // One request to the router, as Run() with two segments makes it.
  bool RunHeldAndWholeBlocks(uint8_t *iv, uint8_t *out, const uint8_t *held,
                             const uint8_t *in, size_t len) {
    constexpr Direction kDecrypt = Direction::kDecrypt;
    constexpr size_t kBlock = 16;
    const Path path = ChooseUnbatched(kDecrypt, kBlock + len);
    if (path != Path::kSimd) [[unlikely]] {
      const Segment segments[2] = {{out, held, kBlock},
                                   {out + kBlock, in, len}};
      return Run(path, kDecrypt, iv, std::span(segments, len != 0 ? 2 : 1),
                 nullptr, kBlock + len);
    }
    BlocksOnSimd(kDecrypt, iv, out, held, kBlock);
    if (len != 0) BlocksOnSimd(kDecrypt, iv, out + kBlock, in, len);
    route_.Served(Path::kSimd, kBlock + len);
    return true;
  }

  // Run() for one CTR segment of any length (`counter` in/out, the last
  // partial block's keystream block to `keystream`), as RunWholeBlocks()
  // for ECB and CBC.
  bool RunCtr(uint8_t *counter, uint8_t *out, const uint8_t *in, size_t len,
              uint8_t *keystream) {
    const Segment segment{out, in, len};
    if (!route_.PlainSimd(len)) [[unlikely]] {
      return Run(Direction::kEncrypt, counter, std::span(&segment, 1),
                 keystream);
    }
    CtrOnSimd(counter, segment, keystream);
    route_.Served(Path::kSimd, len);
    return true;
  }

  // Run() for XTS's one data unit, as RunWholeBlocks() for ECB and CBC:
  // it skips the general case's loops, spans and family switch, which a
  // data unit of 16 to 64 bytes would otherwise pay on every call.
  // Requests for the afalg path or the fallback path take Run().
  bool RunDataUnit(Direction direction, uint8_t *iv, uint8_t *out,
                   const uint8_t *in, size_t len) {
    const Path path = ChooseUnbatched(direction, len);
    if (path != Path::kSimd) [[unlikely]] {
      return RunOn(path, direction, iv, out, in, len);
    }
    XtsOnSimd(direction, iv, out, in, len);
    route_.Served(Path::kSimd, len);
    return true;
  }

 private:
  // ECB or CBC whole blocks on the kernels (RunWholeBlocks(),
  // RunHeldAndWholeBlocks() and RunSimd()); inline, as the first two are.
  [[gnu::always_inline]] void BlocksOnSimd(Direction direction, uint8_t *iv,
                                           uint8_t *out, const uint8_t *in,
                                           size_t len) {
    if (family_ == Family::kCbc) {
      direction == Direction::kEncrypt ? simd_.CbcEncrypt(iv, out, in, len)
                                       : simd_.CbcDecrypt(iv, out, in, len);
    } else {
      direction == Direction::kEncrypt ? simd_.EcbEncrypt(out, in, len)
                                       : simd_.EcbDecrypt(out, in, len);
    }
  }
  // One XTS data unit on the kernels, under the IV's first tweak
  // (RunDataUnit() and RunSimd()).
  [[gnu::always_inline]] void XtsOnSimd(Direction direction, uint8_t *iv,
                                        uint8_t *out, const uint8_t *in,
                                        size_t len) {
    const uint8_t *first_tweak = xts_tweak_->FirstTweak(iv);
    direction == Direction::kEncrypt
        ? simd_.XtsEncrypt(first_tweak, out, in, len)
        : simd_.XtsDecrypt(first_tweak, out, in, len);
  }

  // RunWholeBlocks() for a length PlainSimd() does not settle: the
  // router's whole choice, multi-buffer lanes included.
  [[gnu::noinline]] bool RouteWholeBlocks(Direction direction, uint8_t *iv,
                                          uint8_t *out, const uint8_t *in,
                                          size_t len) {
    batch::CallerProbe caller;
    const Path path =
        route_.Choose(direction, len, /*batchable=*/true, caller);
    if (path == Path::kMb) return EncryptCbcBatched(iv, out, in, len, caller);
    if (path != Path::kSimd) return RunOn(path, direction, iv, out, in, len);
    BlocksOnSimd(direction, iv, out, in, len);
    route_.Served(Path::kSimd, len);
    return true;
  }
  // The path of a request that is never batched (decryption, XTS): simd
  // where PlainSimd() settles it, else the router's whole choice.
  Path ChooseUnbatched(Direction direction, uint64_t len) {
    return route_.PlainSimd(len) ? Path::kSimd : RouteUnbatched(direction, len);
  }
  [[gnu::noinline]] Path RouteUnbatched(Direction direction, uint64_t len) {
    batch::CallerProbe caller;  // never asked: the request is not batched
    return route_.Choose(direction, len, /*batchable=*/false, caller);
  }

  // One CTR segment on the kernels (RunCtr() and RunSimd()).
  void CtrOnSimd(uint8_t *counter, const Segment &segment,
                 uint8_t *keystream);

  // Runs a request on `path`, the router's choice for it (not mb: the
  // callers run that themselves, with their CallerProbe).
  [[gnu::noinline]] bool Run(Path path, Direction direction, uint8_t *iv,
                             std::span<const Segment> segments,
                             uint8_t *keystream, uint64_t total);
  // Run() on the simd path or the fallback path.
  bool RunCpu(Path path, Direction direction, uint8_t *iv,
              std::span<const Segment> segments, uint8_t *keystream,
              uint64_t total);
  // RunWholeBlocks() or RunDataUnit() on a path other than simd or mb.
  [[gnu::noinline]] bool RunOn(Path path, Direction direction, uint8_t *iv,
                               uint8_t *out, const uint8_t *in, size_t len);
  // Runs on the afalg path; false if it did not serve the request, with the
  // reason in `handoff` and `segments` pointing at the request's intact
  // input (staged if it was in place).
  bool RunAfalg(Direction direction, uint8_t *iv,
                std::span<const Segment> &segments, uint8_t *keystream,
                uint64_t total, Handoff &handoff);
  void RunSimd(Direction direction, uint8_t *iv, const Segment &segment,
               uint8_t *keystream);
  // A CBC encryption on the mb path: in lanes with concurrent streams when
  // there are any, else alone on the kernels; counted as what it was.
  bool EncryptCbcBatched(uint8_t *iv, uint8_t *out, const uint8_t *in,
                         size_t len, const batch::CallerProbe &caller) {
    // A request of a paused ASYNC job may be left queued: the context
    // holds it, to cancel it if the job is abandoned. Threads' requests
    // never are.
    batch::QueuedRequest *queued = nullptr;
    if (caller.job() != nullptr) {
      BatchState *batch = batch_.GetOrMake();
      if (batch == nullptr) [[unlikely]] {  // nowhere to hold it
        simd_.CbcEncrypt(iv, out, in, len);
        route_.Served(Path::kSimd, len);
        return true;
      }
      queued = &batch->queued;
    }
    const batch::Ran ran = batch::EncryptCbc(
        *simd_.tier(),
        {route_.alg(), &simd_.encrypt_schedule(), iv, out, in, len, queued},
        caller);
    if (ran == batch::Ran::kNot) return false;
    route_.Served(ran == batch::Ran::kInLanes ? Path::kMb : Path::kSimd, len);
    return true;
  }
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

  const Router &router() const { return route_.router(); }
  Alg alg() const { return route_.alg(); }

  // The router's rule for this algorithm and key.
  BlockRoute route_;
  Family family_;
  // What only some contexts use exists once they use it (BENCHMARKS.md, "What
  // does loading aesmux cost: start-up and memory?"): XTS's tweak key, and
  // each path's state but the kernels'. XTS's also holds the first tweak
  // of the context's IV (a copy of the context takes its own copy).
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
  // ECB, CBC, CTR; XTS's data key (the whole key when XTS has no tier). Last,
  // and [[no_unique_address]]: the members of whatever holds the engine go
  // into its tail padding (BENCHMARKS.md, "What does loading aesmux cost:
  // start-up and memory?").
  [[no_unique_address]] kernels::SimdKey simd_;
};

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_BLOCK_ENGINE_H_
