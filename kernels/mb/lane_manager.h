// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Multi-buffer CBC encryption: a lane manager that runs many independent
// CBC-encryption jobs through one tier's multi-buffer kernels (Tier::mb in
// tiers.h), in the manner of intel-ipsec-mb's out-of-order managers with an
// in-order queue on top (kernels/README.md, "Multi-buffer CBC encryption").
//
// CBC encryption is serial within one stream (each block's rounds wait
// for the previous block's ciphertext, however wide the CPU), so
// throughput comes from running independent streams side by side: each
// job takes a lane; when every lane is busy the kernel advances all of
// them by the shortest remaining length, the lanes that finish are retired
// and refilled by later submissions. Nothing ever waits for more work to
// arrive: the caller decides when to Flush().
#ifndef AESMUX_KERNELS_MB_LANE_MANAGER_H_
#define AESMUX_KERNELS_MB_LANE_MANAGER_H_

// Layers (DEVELOPERS.md): only what links aesmux_kernels includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_kernels)
#error "kernels/mb/lane_manager.h belongs to a layer above the one that includes it"
#endif

#include <array>
#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/tiers.h"

namespace aesmux::kernels::mb {

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

// Runs CbcJobs of one key size through one tier's multi-buffer kernels. One
// per thread
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

  // `tier` must be supported by the CPU, have multi-buffer kernels
  // (tier.mb.lanes != 0) and outlive the manager; `rounds` is 10, 12 or 14.
  CbcLaneManager(const Tier &tier, uint32_t rounds);
  ~CbcLaneManager();
  CbcLaneManager(const CbcLaneManager &) = delete;
  CbcLaneManager &operator=(const CbcLaneManager &) = delete;

  const Tier &tier() const { return tier_; }
  uint32_t rounds() const { return rounds_; }
  size_t lanes() const { return tier_.mb.lanes; }
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
  // a narrower one). Fewer than tier().mb.min_lanes busy lanes run one by
  // one on the tier's single-stream kernel instead.
  CbcJob *Flush();

  // What ran, summed since construction: kernel calls (batches; each
  // single-stream call counts as one of one lane) and the lanes they
  // advanced; and the multi-buffer calls of each of the tier's kernels
  // (index as in tier().mb.kernels).
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
  const Tier &tier_;
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
