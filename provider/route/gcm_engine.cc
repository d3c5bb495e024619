// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/route/gcm_engine.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/proverr.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace aesmux::route {
namespace {

// AAD beyond this much forces the routing decision, bounding the buffer.
constexpr size_t kMaxPendingAad = 64 * 1024;
constexpr size_t kAfalgIvLen = 12;

bool OutOfMemory() {
  ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
  return false;
}

// A call that would take the message past one of GCM's limits.
bool TooLong() {
  ERR_raise_data(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED,
                 "beyond GCM's limit on one message's length");
  return false;
}

// A deep copy of `from` into `to`; false if memory ran out.
bool ClonePath(const std::unique_ptr<CpuGcm> &from,
               std::unique_ptr<CpuGcm> *to) {
  if (from == nullptr) {
    to->reset();
    return true;
  }
  *to = from->Clone();
  return *to != nullptr;
}

}  // namespace

bool GcmEngine::Late::CopyFrom(const Late &other) {
  if (!pending_aad.CopyFrom(other.pending_aad) ||
      !afalg_input.CopyFrom(other.afalg_input)) {
    return OutOfMemory();
  }
  value = other.value;
  afalg.ShareFrom(other.afalg);
  return true;
}

void GcmEngine::Late::EndMessage() {
  pending_aad.Clear();
  afalg_input.Clear();
  value.on_afalg = false;
  value.afalg_ran = false;
}

bool GcmEngine::CopyFrom(const GcmEngine &other) {
  std::unique_ptr<CpuGcm> simd, fallback;
  std::unique_ptr<Late> late;
  if (!ClonePath(other.simd_, &simd) ||
      !ClonePath(other.fallback_, &fallback)) {
    return false;
  }
  if (other.late_ != nullptr) {
    late.reset(new (std::nothrow) Late);
    if (late == nullptr) return OutOfMemory();
    if (!late->CopyFrom(*other.late_)) return false;
  }
  value_ = other.value_;
  simd_ = std::move(simd);
  fallback_ = std::move(fallback);
  late_ = std::move(late);
  SetCpu(other.cpu_ == nullptr             ? nullptr
         : other.cpu_ == other.simd_.get() ? simd_.get()
                                           : fallback_.get());
  return true;
}

void GcmEngine::SetKey(std::span<const uint8_t> key) {
  // Setting a key ends the current message, as in the default provider,
  // and one a paused ASYNC job left on the kernel and never came back for.
  CancelQueued();
  SetCpu(nullptr);
  if (late_ != nullptr) {
    late_->value.on_afalg = false;
    late_->value.expected_tag.reset();
  }
  // The same key again (openssl speed re-keys every operation) keeps its
  // schedule and powers of H.
  if (!value_.key.Replace(key)) return;
  if (simd_ != nullptr) simd_->SetKey(key);
  if (fallback_ != nullptr) fallback_->SetKey(key);
  if (late_ != nullptr) late_->afalg.Reset();
  Router::KeySet(value_.alg);
}

CpuGcm *GcmEngine::MakeCpuPath(Path path) {
  std::unique_ptr<CpuGcm> &slot = path == Path::kSimd ? simd_ : fallback_;
  const Router &router = *value_.router;
  if (path == Path::kSimd) {
    slot = SimdGcmPath::Make(*router.tier(), value_.key.bytes());
  } else {
    slot.reset(new (std::nothrow) FallbackGcmPath(
        router.fallback(), value_.alg, value_.key.bytes()));
  }
  if (slot == nullptr) OutOfMemory();
  return slot.get();
}

GcmEngine::Late *GcmEngine::LateState() {
  if (late_ == nullptr) {
    late_.reset(new (std::nothrow) Late);
    if (late_ == nullptr) OutOfMemory();
    SetCpu(cpu_);  // a message with late state is not OnSimd()
  }
  return late_.get();
}

bool GcmEngine::Start(Direction direction, std::span<const uint8_t> iv) {
  BeginOn(nullptr, direction);
  if (value_.start_path) {
    // Routed now, with nothing kept: the default settings' every message.
    SetCpu(CpuPath(*value_.start_path));
    if (cpu_ != nullptr &&
        OnPath(cpu_, [&](auto &path) { return path.Start(direction, iv); })) {
      return true;
    }
    SetCpu(nullptr);  // the message cannot go on
    return false;
  }
  Late *late = LateState();
  if (late == nullptr) return false;
  late->afalg.CancelQueued();  // a message whose ASYNC job never came back
  late->EndMessage();
  std::memcpy(late->value.iv.data(), iv.data(), iv.size());
  late->value.iv_len = iv.size();
  return true;
}

bool GcmEngine::SwitchDirection(Direction direction) {
  if (direction == value_.direction) return true;
  if (late_ != nullptr && late_->value.on_afalg && late_->value.afalg_ran) {
    // The kernel has taken the first payload in the old direction: the
    // message goes on on a CPU path.
    if (!ReplayOnCpu(value_.router->HandedOff(value_.alg, Handoff::kGcmSplit,
                                              value_.message_bytes()))) {
      return false;
    }
  }
  value_.direction = direction;
  return cpu_ == nullptr || cpu_->SwitchDirection(direction);
}

void GcmEngine::ExpectTag(std::span<const uint8_t> tag) {
  // Only a message routed late can go to the afalg path.
  if (value_.start_path) return;
  if (late_ == nullptr) {
    // Out of memory, the message runs on a CPU path: settag succeeds, so
    // nothing is raised.
    late_.reset(new (std::nothrow) Late);
    if (late_ == nullptr) return;
    SetCpu(cpu_);  // a message with late state is not OnSimd()
  }
  Late *late = late_.get();
  if (tag.size() != 16) {
    late->value.expected_tag.reset();
    return;
  }
  late->value.expected_tag.emplace();
  std::memcpy(late->value.expected_tag->data(), tag.data(), 16);
}

bool GcmEngine::Route(uint64_t len) {
  const Path path = value_.router->Choose(value_.alg, len);
  if (path == Path::kAfalg) {
    // The message goes to the kernel whole, at its first payload.
    late_->value.on_afalg = true;
    return true;
  }
  return StartCpu(path);
}

bool GcmEngine::StartCpu(Path path) {
  Late &late = *late_;
  CpuGcm *cpu = CpuPath(path);
  if (cpu == nullptr ||
      !cpu->Start(value_.direction, {late.value.iv.data(), late.value.iv_len})) {
    return false;
  }
  SetCpu(cpu);
  late.value.on_afalg = false;
  if (late.pending_aad.empty()) return true;
  const bool ok = cpu_->Aad(late.pending_aad.bytes());
  late.pending_aad.Clear();
  return ok;
}

bool GcmEngine::AadGeneral(std::span<const uint8_t> aad) {
  if (aad.size() > kMaxAadLen - value_.aad_len) return TooLong();
  value_.aad_len += aad.size();
  if (cpu_ != nullptr) {
    return cpu_->Aad(aad);
  }
  if (late_ == nullptr) return false;  // no message under way
  Late &late = *late_;
  if (late.value.on_afalg) return false;  // AAD after payload
  const uint64_t len = uint64_t{late.pending_aad.size()} + aad.size();
  if (len <= kMaxPendingAad) {
    return late.pending_aad.Append(aad) || OutOfMemory();
  }
  // Too much to buffer: this message starts now, on a CPU path, with the
  // AAD buffered so far and then this, unbuffered.
  const Router &router = *value_.router;
  const Path path = router.Choose(value_.alg, len) == Path::kAfalg
                        ? router.HandedOff(value_.alg, Handoff::kTooLong, len)
                        : router.ChooseCpu(value_.alg, len);
  return StartCpu(path) && cpu_->Aad(aad);
}

bool GcmEngine::CryptGeneral(uint8_t *out, const uint8_t *in, size_t len) {
  // No payload is no call, on every path: it neither routes a message nor
  // ends its AAD (docs/differences.md).
  if (len == 0) return true;
  if (len > kMaxDataLen - value_.data_len) return TooLong();
  if (cpu_ == nullptr) {
    if (late_ == nullptr) return false;  // no message under way
    Late &late = *late_;
    if (!late.value.on_afalg &&
        !Route(uint64_t{late.pending_aad.size()} + len)) {
      return false;
    }
    if (late.value.on_afalg) {
      if (!late.value.afalg_ran) return CryptAfalg(out, in, len);
      // The message goes on: the kernel cannot continue it.
      if (!ReplayOnCpu(value_.router->HandedOff(
              value_.alg, Handoff::kGcmSplit, value_.message_bytes()))) {
        return false;
      }
    }
  }
  value_.data_len += len;
  return cpu_->Crypt(value_.direction, out, in, len);
}

bool GcmEngine::CryptAfalg(uint8_t *out, const uint8_t *in, size_t len) {
  Late &late = *late_;
  const uint64_t total = late.pending_aad.size() + len;
  const bool encrypt = value_.direction == Direction::kEncrypt;
  value_.data_len += len;
  late.afalg_input.Clear();
  afalg::Outcome outcome;
  if (late.value.iv_len != kAfalgIvLen ||
      (!encrypt && !late.value.expected_tag.has_value())) {
    outcome = afalg::Outcome::Fail(Handoff::kUnsupported, -EOPNOTSUPP);
  } else if (!afalg::Service::Get().GcmFits(late.pending_aad.size(), len)) {
    outcome = afalg::Outcome::Fail(Handoff::kTooLong, -EMSGSIZE);
  } else if (!late.afalg_input.Append({in, len})) {
    // Kept for a replay, and so that an in-place request keeps its input.
    outcome = afalg::Outcome::Fail(Handoff::kSetup, -ENOMEM);
  } else {
    if (!encrypt) late.value.afalg_tag = *late.value.expected_tag;
    outcome = late.afalg.Gcm(
        value_.alg, value_.key.bytes(), value_.direction,
        {late.value.iv.data(), late.value.iv_len}, late.pending_aad.bytes(),
        out, late.afalg_input.data(), len, late.value.afalg_tag.data());
    afalg::Service::Get().Report(value_.alg, outcome);
  }
  if (outcome.ok()) {
    late.value.afalg_ran = true;
    return true;
  }
  // Replayed on a CPU path, from the copy if the kernel had it: for a
  // rejected tag (EBADMSG) too, since the caller gets the plaintext before
  // final, as from the default provider, and since the message may go on
  // (then the kernel checked the tag against its first part only). That
  // path's Finish gives the verdict.
  if (!StartCpu(value_.router->HandedOff(value_.alg, outcome.reason, total))) {
    return false;
  }
  const uint8_t *input =
      late.afalg_input.empty() ? in : late.afalg_input.data();
  const bool ok = cpu_->Crypt(value_.direction, out, input, len);
  late.afalg_input.Clear();
  return ok;
}

bool GcmEngine::ReplayOnCpu(Path path) {
  Late &late = *late_;
  if (!StartCpu(path)) return false;
  // The kernel's output was the caller's: this pass only advances the CPU
  // path's state, a piece at a time.
  uint8_t discard[512];
  bool ok = true;
  for (size_t done = 0; ok && done < late.afalg_input.size();) {
    const size_t piece =
        std::min(sizeof(discard), late.afalg_input.size() - done);
    ok = cpu_->Crypt(value_.direction, discard,
                     late.afalg_input.data() + done, piece);
    done += piece;
  }
  kernels::SecureZero(discard, sizeof(discard));
  late.value.afalg_ran = false;
  late.afalg_input.Clear();
  return ok;
}

void GcmEngine::EndMessage() {
  SetCpu(nullptr);
  if (late_ != nullptr) late_->EndMessage();
}

bool GcmEngine::FinishGeneral(uint8_t tag[16], size_t tag_len) {
  const bool encrypt = value_.direction == Direction::kEncrypt;
  bool ok = false;
  if (cpu_ == nullptr) {
    if (late_ == nullptr) return false;  // no message under way
    Late &late = *late_;
    if (!late.value.on_afalg && !Route(late.pending_aad.size())) return false;
    if (late.value.on_afalg && !late.value.afalg_ran &&
        !CryptAfalg(nullptr, nullptr, 0)) {
      return false;
    }
    if (late.value.on_afalg) {
      if (encrypt) {
        std::memcpy(tag, late.value.afalg_tag.data(), 16);
        ok = true;
      } else if (tag_len == 16 &&
                 CRYPTO_memcmp(tag, late.value.afalg_tag.data(), 16) == 0) {
        ok = true;  // the kernel verified this very tag
      } else if (!ReplayOnCpu(value_.router->ChooseCpu(
                     value_.alg, value_.message_bytes()))) {
        // The caller changed the tag since the payload: check it on a CPU
        // path.
        return false;
      }
    }
  }
  Path path = Path::kAfalg;
  if (cpu_ != nullptr) {
    path = cpu_->path();
    ok = cpu_->Finish(value_.direction, tag, tag_len);
  }
  Router::Served(value_.alg, path, value_.message_bytes());
  if (late_ != nullptr) late_->value.expected_tag.reset();
  // A decryption whose tag did not match stays open on its path, as in the
  // default provider: more data continues the same message.
  if (ok || encrypt) EndMessage();
  return ok;
}

bool GcmEngine::Record(Direction direction, std::span<const uint8_t> iv,
                       std::span<const uint8_t> aad, uint8_t *out,
                       const uint8_t *in, size_t len, uint8_t tag[16],
                       RecordLayout layout) {
  if (len > kMaxDataLen || aad.size() > kMaxAadLen) return TooLong();
  value_.direction = direction;
  SetCpu(nullptr);
  const uint64_t total = uint64_t{aad.size()} + len;
  Path path;
  if (value_.start_path) [[likely]] {
    path = *value_.start_path;
  } else {
    Late *late = LateState();
    if (late == nullptr) return false;
    late->afalg.CancelQueued();  // a message whose ASYNC job never came back
    late->EndMessage();
    late->value.expected_tag.reset();
    path = value_.router->Choose(value_.alg, total);
    if (path == Path::kAfalg) {
      if (RecordAfalg(iv, aad, out, in, len, tag, &path)) return true;
      if (!late->afalg_input.empty()) {
        in = late->afalg_input.data();
        layout = RecordLayout::kApart;
      }
    }
  }
  CpuGcm *cpu = CpuPath(path);
  bool ok = false;
  if (cpu != nullptr) {
    ok = OnPath(cpu, [&](auto &on) {
      return on.Record(direction, iv, aad, out, in, len, tag, layout);
    });
    Router::Served(value_.alg, path, total);
  }
  if (late_ != nullptr) late_->afalg_input.Clear();
  return ok;
}

bool GcmEngine::RecordAfalg(std::span<const uint8_t> iv,
                            std::span<const uint8_t> aad, uint8_t *out,
                            const uint8_t *in, size_t len, uint8_t tag[16],
                            Path *path) {
  Late &late = *late_;
  const uint64_t total = uint64_t{aad.size()} + len;
  const bool encrypt = value_.direction == Direction::kEncrypt;
  afalg::Outcome outcome;
  if (iv.size() != kAfalgIvLen) {
    outcome = afalg::Outcome::Fail(Handoff::kUnsupported, -EOPNOTSUPP);
  } else if (!afalg::Service::Get().GcmFits(aad.size(), len)) {
    outcome = afalg::Outcome::Fail(Handoff::kTooLong, -EMSGSIZE);
  } else if (!late.afalg_input.Append({in, len})) {
    // Copied: Key::Gcm takes no input that overlaps its output.
    outcome = afalg::Outcome::Fail(Handoff::kSetup, -ENOMEM);
  } else {
    if (!encrypt) std::memcpy(late.value.afalg_tag.data(), tag, 16);
    outcome = late.afalg.Gcm(value_.alg, value_.key.bytes(),
                             value_.direction, iv, aad, out,
                             late.afalg_input.data(), len,
                             late.value.afalg_tag.data());
    afalg::Service::Get().Report(value_.alg, outcome);
  }
  if (outcome.ok()) {
    if (encrypt) std::memcpy(tag, late.value.afalg_tag.data(), 16);
    late.afalg_input.Clear();
    Router::Served(value_.alg, Path::kAfalg, total);
    return true;
  }
  // Run on a CPU path from the copy: for a rejected tag (EBADMSG) too,
  // where that path gives the same verdict.
  *path = value_.router->HandedOff(value_.alg, outcome.reason, total);
  return false;
}

}  // namespace aesmux::route
