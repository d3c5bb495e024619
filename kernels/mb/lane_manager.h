// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Multi-buffer CBC encryption: the tiers of multi-buffer kernels and a lane
// manager that runs many independent CBC-encryption jobs through one of
// them, in the manner of intel-ipsec-mb's out-of-order managers with an
// in-order queue on top (kernels/README.md, "Multi-buffer CBC encryption").
//
// CBC encryption is serial within one stream (about 2 cycles per byte
// however wide the CPU), so throughput comes from running independent
// streams side by side: each job takes a lane; when every lane is busy the
// kernel advances all of them by the shortest remaining length, the lanes
// that finish are retired and refilled by later submissions. Nothing ever
// waits for more work to arrive: the caller decides when to Flush().
#ifndef AESMUX_KERNELS_MB_LANE_MANAGER_H_
#define AESMUX_KERNELS_MB_LANE_MANAGER_H_

// Layers (DEVELOPERS.md): only what links aesmux_kernels includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_kernels)
#error "kernels/mb/lane_manager.h belongs to a layer above the one that includes it"
#endif

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/kernels.h"
#include "kernels/tiers.h"

namespace aesmux::kernels::mb {

// A multi-buffer CBC-encryption kernel (contract in kernels.h).
using MbCbcEncryptFn = void (*)(aesmux_mb_cbc_lanes *lanes, uint32_t lane_mask,
                                size_t len, uint32_t rounds);

// A multi-buffer kernel and its width: it runs lanes 0 .. lanes-1.
struct MbKernel {
  size_t lanes;  // 4, 8 or 16
  MbCbcEncryptFn cbc_encrypt;
};

// One tier of multi-buffer kernels. Names match the single-stream tiers of
// tiers.h with the same CPU requirements, so one tier name selects both.
struct MbTier {
  std::string_view name;
  CpuFeatures required;
  size_t lanes;      // the widest kernel's: 8 or 16
  size_t min_lanes;  // fewer busy lanes run one by one on cbc_encrypt_one
  std::span<const MbKernel> kernels;  // narrowest first, widest last
  // The single-stream kernel for those (aesni's, see below).
  void (*cbc_encrypt_one)(const aesmux_aes_key *enc, uint8_t iv[16],
                          uint8_t *out, const uint8_t *in, size_t len);

  const MbKernel &widest() const { return kernels.back(); }
  // The narrowest kernel that runs every lane of `lane_mask` (bits at or
  // above `lanes` are ignored).
  const MbKernel &KernelFor(uint32_t lane_mask) const {
    const size_t needed = std::bit_width(lane_mask);
    for (const MbKernel &kernel : kernels) {
      if (kernel.lanes >= needed) return kernel;
    }
    return widest();
  }
};

#if AESMUX_HAVE_KERNELS
// One tier's kernels, narrowest first. A narrower kernel costs less per
// call (fewer vectors per step) when only low lanes are busy.
inline constexpr MbKernel kVaesAvx512Kernels[] = {
    {4, aesmux_cbc_encrypt_x4_vaes_avx512},
    {8, aesmux_cbc_encrypt_x8_vaes_avx512},
    {16, aesmux_cbc_encrypt_x16_vaes_avx512},
};
inline constexpr MbKernel kVaesAvx2Kernels[] = {
    {4, aesmux_cbc_encrypt_x4_vaes_avx2},
    {8, aesmux_cbc_encrypt_x8_vaes_avx2},
    {16, aesmux_cbc_encrypt_x16_vaes_avx2},
};
inline constexpr MbKernel kAesniKernels[] = {
    {4, aesmux_cbc_encrypt_x4_aesni},
    {8, aesmux_cbc_encrypt_x8_aesni},
};

// Every multi-buffer tier built into this library, best first.
//
// A kernel call costs about the same whatever the number of its busy lanes,
// so with few busy lanes running them one after the other on the
// single-stream aesni kernel can be faster: min_lanes is the break-even
// measured with mb_bench --min-lanes (Sapphire Rapids class, AES-128 and
// AES-256, 1 and 16 KiB). On the x4 kernels one busy lane runs at 0.77-0.93
// times the single-stream speed (the single-stream kernel keeps the IV XOR
// off the chain), two busy lanes at 1.6-1.9x on vaes_avx512 and vaes_avx2
// and 1.3-1.6x on aesni.
inline constexpr std::array kMbTiers = {
    MbTier{"vaes_avx512",
           kSse41 | kAesni | kPclmulqdq | kAvx | kAvx2 | kBmi2 | kVaes |
               kVpclmulqdq | kAvx512f | kAvx512bw | kAvx512vl,
           16, 2, kVaesAvx512Kernels, aesmux_cbc_encrypt_aesni},
    MbTier{"vaes_avx2",
           kSse41 | kAesni | kPclmulqdq | kAvx | kAvx2 | kVaes | kVpclmulqdq,
           16, 2, kVaesAvx2Kernels, aesmux_cbc_encrypt_aesni},
    MbTier{"aesni", kSse41 | kAesni | kPclmulqdq, 8, 2, kAesniKernels,
           aesmux_cbc_encrypt_aesni},
};

// Widths ascend and the last is the tier's.
constexpr bool KernelsAscendTo(const MbTier &tier) {
  size_t previous = 0;
  for (const MbKernel &kernel : tier.kernels) {
    if (kernel.lanes <= previous) return false;
    previous = kernel.lanes;
  }
  return previous == tier.lanes;
}
static_assert(KernelsAscendTo(kMbTiers[0]) && KernelsAscendTo(kMbTiers[1]) &&
              KernelsAscendTo(kMbTiers[2]));
#else
inline constexpr std::array<MbTier, 0> kMbTiers{};  // tiers.h: no kernels
#endif

// The best multi-buffer tier whose requirements `available` meets, or
// nullptr.
const MbTier *BestMbTier(CpuFeatures available);

// The multi-buffer tier called `name`, or nullptr. Does not check the CPU:
// see Supported().
const MbTier *MbTierByName(std::string_view name);

inline bool Supported(const MbTier &tier, CpuFeatures available) {
  return (tier.required & ~available) == 0;
}

// One CBC encryption, filled in by the caller. The manager reads key, in
// and len, writes out[0, len) and iv, and sets done; it never changes the
// other fields. Everything the job points to must stay valid, and unchanged
// except by the manager, until the job is returned.
struct CbcJob {
  // Encryption schedule; key->rounds must equal the manager's rounds.
  const aesmux_aes_key *key = nullptr;
  // In: the chaining value. Out (when done): the last ciphertext block.
  uint8_t *iv = nullptr;
  uint8_t *out = nullptr;  // may equal `in`; must not overlap other jobs'
  const uint8_t *in = nullptr;
  size_t len = 0;  // a multiple of 16, 0 allowed (a partial block is ignored)
  void *user = nullptr;  // the caller's cookie, untouched
  bool done = false;     // set by the manager when the job is complete
};

// Runs CbcJobs of one key size through one multi-buffer tier. One per thread
// (not thread-safe). Jobs are returned in submission order (oldest first).
//
// Key material copied into the lanes (round keys, chaining values) is wiped
// as soon as a lane retires, and everything is wiped on destruction.
// Destroying a manager that still has pending jobs abandons them (their
// outputs are partial): flush first. A manager is about 6.7 KB (the lane
// table and the pending ring): keep it off small stacks such as an async
// job's.
class CbcLaneManager {
 public:
  // At most this many jobs may be pending; a Submit beyond it first
  // completes and returns the oldest (see Submit).
  static constexpr size_t kMaxPending = 256;

  // `tier` must be supported by the CPU and outlive the manager; `rounds`
  // is 10, 12 or 14.
  CbcLaneManager(const MbTier &tier, uint32_t rounds);
  ~CbcLaneManager();
  CbcLaneManager(const CbcLaneManager &) = delete;
  CbcLaneManager &operator=(const CbcLaneManager &) = delete;

  const MbTier &tier() const { return tier_; }
  uint32_t rounds() const { return rounds_; }
  size_t lanes() const { return tier_.lanes; }
  // Jobs submitted and not yet returned (queued, running or complete).
  size_t pending() const { return queue_size_; }
  // Lanes holding an incomplete job.
  size_t busy_lanes() const;

  // Queues `job` (done is cleared); a job of len 0 completes at once. When
  // this fills the last free lane, runs the kernel until at least one lane
  // retires. Returns the oldest pending job if it is complete (removing it),
  // else nullptr. If kMaxPending jobs were already pending, the oldest is
  // first completed (as by Flush) and returned instead.
  CbcJob *Submit(CbcJob *job);

  // The oldest pending job if it is complete (removing it), else nullptr.
  // Runs nothing.
  CbcJob *GetCompleted();

  // Takes `job` out if it is pending, so that its owner may go before it
  // is returned (jobs submitted before it may still be running): it is
  // never returned. If it was not complete, it is never run further, its
  // lane (round keys and chaining value) is wiped, what already ran of it
  // stays in its output and its iv is not updated. Returns whether it was
  // pending. Runs nothing.
  bool Remove(const CbcJob *job);

  // Runs the busy lanes (idle lanes masked off) until the oldest pending
  // job is complete, and returns it (removing it); nullptr when nothing is
  // pending. The busy lanes run on the tier's narrowest kernel that has
  // them all (they are moved down into free lanes first where that allows
  // a narrower one). Fewer than tier().min_lanes busy lanes run one by one
  // on the tier's single-stream kernel instead.
  CbcJob *Flush();

  // What ran, summed since construction: kernel calls (batches; each
  // single-stream call counts as one of one lane) and the lanes they
  // advanced; and the multi-buffer calls of each of the tier's kernels
  // (index as in tier().kernels).
  uint64_t kernel_calls() const { return kernel_calls_; }
  uint64_t lanes_filled() const { return lanes_filled_; }
  uint64_t calls_of_kernel(size_t index) const {
    return index < calls_by_kernel_.size() ? calls_by_kernel_[index] : 0;
  }

 private:
  // Takes `lane` for `job`; its key and IV are copied by LoadLanes.
  void Place(CbcJob *job, unsigned lane);
  void LoadLanes(uint32_t lanes);
  // Advances every busy lane by the shortest remaining length and retires
  // the lanes that finish.
  void RunBusyLanes();
  // Moves busy lanes down into free ones so that they fit the narrowest
  // kernel their number allows; returns the busy mask.
  uint32_t CompactLanes();
  void MoveLane(unsigned from, unsigned to);
  void Retire(uint32_t lanes);
  // Frees `lane`, wiping what LoadLanes copied into it.
  void ClearLane(unsigned lane);
  CbcJob *PopOldest();

  aesmux_mb_cbc_lanes lanes_;  // first: 64-byte aligned
  const MbTier &tier_;
  const uint32_t rounds_;
  const uint32_t all_lanes_;  // mask of the tier's lanes
  uint32_t busy_ = 0;         // mask of lanes holding an incomplete job
  uint32_t unloaded_ = 0;     // busy lanes whose key and IV are not loaded
  std::array<CbcJob *, 16> lane_job_{};
  std::array<size_t, 16> lane_remaining_{};
  std::array<CbcJob *, kMaxPending> queue_{};  // ring, oldest at queue_head_
  size_t queue_head_ = 0;
  size_t queue_size_ = 0;
  uint64_t kernel_calls_ = 0;
  uint64_t lanes_filled_ = 0;
  std::array<uint64_t, 3> calls_by_kernel_{};  // a tier has up to 3
};

}  // namespace aesmux::kernels::mb

#endif  // AESMUX_KERNELS_MB_LANE_MANAGER_H_
