// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// GcmEngine: one AES-GCM key, ready on every path, serving messages.
//
// Unlike the block modes, a GCM message carries hidden state (the GHASH
// accumulator) from its first byte to its tag, so a whole message runs on
// one path. The router decides when the message's first payload arrives,
// with the length of that payload plus the AAD seen so far; until then the
// AAD is buffered, up to 64 KiB: AAD that would take it beyond starts the
// message on a CPU path at once, unbuffered (the afalg path cannot take
// that much). When the decision cannot depend on the length (the default
// settings), the message is routed at Start() and nothing is buffered.
//
// The CPU paths run behind one interface (gcm_paths.h), each made when it
// first serves a message; the state that only a routed-late message needs
// (its IV and AAD until routed, the afalg path's) is made when the router's
// decision depends on the length, and never with the default settings.
//
// Buffers are allocated without exceptions: running out of memory fails
// the call with ERR_R_MALLOC_FAILURE on OpenSSL's error queue (or, for a
// copy only the afalg path needs, hands the message to a CPU path).
//
// The afalg path needs a message whole: AAD, payload and, to decrypt, the
// tag, in one AF_ALG request. A message routed there runs on the kernel at
// its first payload (with the tag the caller set before it, see ExpectTag),
// and the result is kept for Finish. Since a caller may still send more
// payload, the first payload's input is copied; if more comes, the message
// is replayed from that copy on the CPU's path and goes on there (counted as
// gcm_split). Messages the kernel cannot take (IV not 12 bytes, tag not 16
// bytes or not yet known, too long) go to the CPU's path at once; one it
// fails is run there from the copy. When the kernel rejects the tag
// (EBADMSG), the message is replayed on the CPU's path too: the caller
// gets its plaintext before final, as from the default provider, and that
// path's Finish fails on the bad tag (or succeeds, if the kernel only saw
// the first part of a message that went on).
#ifndef AESMUX_PROVIDER_ROUTE_GCM_ENGINE_H_
#define AESMUX_PROVIDER_ROUTE_GCM_ENGINE_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/gcm_engine.h belongs to a layer above the one that includes it"
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "provider/afalg/afalg.h"
#include "provider/core/algorithm.h"
#include "provider/route/gcm_paths.h"
#include "provider/route/raw_key.h"
#include "provider/route/router.h"
#include "provider/route/scratch_buffer.h"

namespace aesmux::route {

class GcmEngine {
 public:
  GcmEngine(const Router &router, Alg alg)
      : value_{&router, alg, StartPath(router, alg), {}} {}
  ~GcmEngine() = default;
  GcmEngine(const GcmEngine &) = delete;
  GcmEngine &operator=(const GcmEngine &) = delete;

  // Makes this a deep copy of `other`, mid-message state included; false
  // (with the error on OpenSSL's queue) if that fails.
  bool CopyFrom(const GcmEngine &other);

  // Also cancels what CancelQueued() cancels.
  void SetKey(std::span<const uint8_t> key);
  bool has_key() const { return !value_.key.empty(); }

  // Cancels a message that a paused ASYNC job left on the afalg path and
  // never came back for (the caller is re-initialising the context); Start
  // and the destructor do the same.
  void CancelQueued() {
    if (late_) late_->afalg.CancelQueued();
  }

  // Begins a message; `iv` is 1..128 bytes.
  bool Start(Direction direction, std::span<const uint8_t> iv);
  // Whether Start cannot fail: on the kernels' path, made already and
  // routed at Start. StartAtOnce is Start there.
  bool StartsAtOnce() const {
    return value_.start_path == Path::kSimd && simd_ != nullptr;
  }
  void StartAtOnce(Direction direction, std::span<const uint8_t> iv) {
    BeginOn(simd_.get(), direction);
    SimdPath().Start(direction, iv);
  }
  // Goes on with the current message in `direction`, as the default
  // provider does when a context changes direction mid-message: the same
  // counter and GHASH state, which from then on takes the caller's input
  // when decrypting and the output when encrypting.
  bool SwitchDirection(Direction direction);
  // Decrypting: the tag the next Finish will check, when the caller knows it
  // before the payload (TLS, OpenSSH); only then can the message go to the
  // afalg path. Forgotten at Finish.
  void ExpectTag(std::span<const uint8_t> tag);
  // Each returns false when the message cannot go on: AAD after payload,
  // a length beyond GCM's limits, or a failure of the fallback path.
  // GCM's limits (SP 800-38D: at most kMaxDataLen bytes of payload and
  // kMaxAadLen of AAD in a message) are checked here, for every path,
  // before any runs: a call that would cross one fails whole, with
  // nothing written, and the message goes on as before it.
  static constexpr uint64_t kMaxDataLen = (uint64_t{1} << 36) - 32;
  static constexpr uint64_t kMaxAadLen = uint64_t{1} << 61;
  bool Aad(std::span<const uint8_t> aad) {
    if (OnSimd() && aad.size() <= kMaxAadLen - value_.aad_len) [[likely]] {
      value_.aad_len += aad.size();
      return SimdPath().Aad(aad);
    }
    return AadGeneral(aad);
  }
  bool Crypt(uint8_t *out, const uint8_t *in, size_t len) {
    if (OnSimd() && len <= kMaxDataLen - value_.data_len) [[likely]] {
      value_.data_len += len;
      return SimdPath().Crypt(value_.direction, out, in, len);
    }
    return CryptGeneral(out, in, len);
  }
  // Tests only: the message under way counts as having had `aad_len`
  // bytes of AAD and `data_len` of payload (the paths' own state is left
  // as it is), so that the limits can be tried without 64 GiB of work.
  void AssumeMessageLengthsForTesting(uint64_t aad_len, uint64_t data_len) {
    value_.aad_len = aad_len;
    value_.data_len = data_len;
  }
  // Encrypting: writes the 16-byte tag. Decrypting: returns whether the first
  // `tag_len` bytes of `tag` (16 bytes readable) match (compared in constant
  // time); if they do not, the message is not over: like the default
  // provider's, it goes on with further Crypt calls, and Finish may be
  // called again.
  bool Finish(uint8_t tag[16], size_t tag_len) {
    if (OnSimd()) [[likely]] {
      const bool ok = SimdPath().Finish(value_.direction, tag, tag_len);
      Router::Served(value_.alg, Path::kSimd, value_.message_bytes());
      if (ok || value_.direction == Direction::kEncrypt) SetCpu(nullptr);
      return ok;
    }
    return FinishGeneral(tag, tag_len);
  }

  // A whole message whose parts are all at hand (a TLS 1.2 record): IV,
  // AAD, `len` bytes of payload and a 16-byte tag, in one call. The router
  // decides once for the message (its AAD and payload), the path runs it
  // in one call (the afalg path as one whole-message request) and it is
  // counted once. Encrypting writes the tag; decrypting returns false if
  // `tag` does not match, and `out` then holds the unauthenticated
  // plaintext for the caller to wipe. False too when no path could serve
  // it (with the error on OpenSSL's queue). The message under way, if
  // any, ends, and none is left under way; unless the message is beyond
  // GCM's limits, which fails it as Aad and Crypt do, before anything.
  // `layout` kTlsInPlace: a TLS 1.2 record in place (gcm_paths.h), which
  // the fallback path hands to the default provider whole, as libssl would.
  bool Record(Direction direction, std::span<const uint8_t> iv,
              std::span<const uint8_t> aad, uint8_t *out, const uint8_t *in,
              size_t len, uint8_t tag[16],
              RecordLayout layout = RecordLayout::kApart);

 private:
  // A message routed late: what it needs until the router has its length,
  // and the afalg path's state. Made on first need, only when the router's
  // decision depends on the length.
  struct Late {
    ~Late() { afalg.CancelQueued(); }  // before the buffers the kernel uses
    bool CopyFrom(const Late &other);
    // The end of a message: its copies wiped.
    void EndMessage();

    // Plain values, copied whole.
    struct Value {
      std::array<uint8_t, 128> iv{};
      size_t iv_len = 0;
      bool on_afalg = false;  // routed to the afalg path
      std::optional<std::array<uint8_t, 16>> expected_tag;
      bool afalg_ran = false;  // the kernel served the first payload
      std::array<uint8_t, 16> afalg_tag{};  // the tag it made or verified
    } value;
    ScratchBuffer pending_aad;  // until routed
    ScratchBuffer afalg_input;  // the first payload's input, on the afalg path
    afalg::Key afalg;
  };

  // The path of every message when the router's decision cannot depend on
  // the length (Router::LengthMatters): decided once, for the instance's
  // life, not per message.
  static std::optional<Path> StartPath(const Router &router, Alg alg) {
    if (router.LengthMatters(alg)) return std::nullopt;
    return router.Choose(alg, 0);
  }

  // The CPU path `path`, made and keyed on first use; null if memory ran
  // out (with the error on OpenSSL's queue).
  CpuGcm *CpuPath(Path path) {
    CpuGcm *made = (path == Path::kSimd ? simd_ : fallback_).get();
    return made != nullptr ? made : MakeCpuPath(path);
  }
  CpuGcm *MakeCpuPath(Path path);
  // call(path) on `cpu`, either of the paths (not null): on the kernels'
  // path, SimdGcmPath itself, whose methods (it is final) are called
  // directly and inlined here, not through the virtual table.
  template <typename Call>
  decltype(auto) OnPath(CpuGcm *cpu, Call call) {
    if (cpu == simd_.get()) return call(*static_cast<SimdGcmPath *>(cpu));
    return call(*cpu);
  }
  // Whether the current message runs on the kernels' path with no late
  // state to keep (routed at Start): then SimdPath() is its path, a
  // SimdGcmPath whose calls are inlined into Aad, Crypt and Finish (the
  // common case of every record runs no other code of the engine).
  bool OnSimd() const { return on_simd_; }
  SimdGcmPath &SimdPath() const { return *static_cast<SimdGcmPath *>(cpu_); }
  // Every change of cpu_ (and the making of late_) goes through here,
  // which keeps on_simd_ with them.
  void SetCpu(CpuGcm *cpu) {
    cpu_ = cpu;
    on_simd_ = cpu != nullptr && cpu == simd_.get() && late_ == nullptr;
  }
  // A message begins on `cpu` (made) in `direction`, before the path
  // itself starts it.
  void BeginOn(CpuGcm *cpu, Direction direction) {
    value_.direction = direction;
    value_.aad_len = 0;
    value_.data_len = 0;
    SetCpu(cpu);
  }
  // Aad, Crypt and Finish on any path, the limits checked.
  bool AadGeneral(std::span<const uint8_t> aad);
  bool CryptGeneral(uint8_t *out, const uint8_t *in, size_t len);
  bool FinishGeneral(uint8_t tag[16], size_t tag_len);
  // late_, made on first use; null as CpuPath.
  Late *LateState();
  // Routes the current message (to the afalg path: nothing more happens
  // until the payload) or starts it on a CPU path with the buffered AAD.
  bool Route(uint64_t len);
  bool StartCpu(Path path);
  // The message's first payload (or none, from Finish) on the kernel.
  bool CryptAfalg(uint8_t *out, const uint8_t *in, size_t len);
  // Record() on the kernel. False if the kernel did not serve it: `*path`
  // is then the path the router hands it to, and the input, if it was
  // copied before the kernel could write over it, is in late_->afalg_input.
  bool RecordAfalg(std::span<const uint8_t> iv, std::span<const uint8_t> aad,
                   uint8_t *out, const uint8_t *in, size_t len,
                   uint8_t tag[16], Path *path);
  // Moves a message the kernel has served so far to the CPU path `path`:
  // AAD and the first payload (from its copy) replayed there.
  bool ReplayOnCpu(Path path);
  void EndMessage();

  // Plain values, copied whole by CopyFrom.
  struct Value {
    const Router *router;
    Alg alg;
    std::optional<Path> start_path;
    GcmRawKey key;
    // The current message.
    Direction direction = Direction::kEncrypt;
    uint64_t aad_len = 0;
    uint64_t data_len = 0;
    uint64_t message_bytes() const { return aad_len + data_len; }
  } value_;
  // The current message's path once it runs on a CPU path: simd_ or
  // fallback_. simd_ holds a SimdGcmPath (OnSimd and OnPath rely on it).
  CpuGcm *cpu_ = nullptr;
  bool on_simd_ = false;  // OnSimd(), kept by SetCpu
  std::unique_ptr<CpuGcm> simd_;
  std::unique_ptr<CpuGcm> fallback_;
  std::unique_ptr<Late> late_;
};

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_GCM_ENGINE_H_
