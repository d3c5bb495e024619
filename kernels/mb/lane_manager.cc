// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "kernels/mb/lane_manager.h"

#include <bit>
#include <cstring>
#include <limits>

#include "kernels/simd_key.h"

namespace aesmux::kernels::mb {
namespace {

using KeyTable = uint8_t[15][16][16];

// One lane's column of the key table: 15 rows 256 bytes apart, so 15
// stores to 15 cache lines. Rows past the round count are never read.
void CopyKeyColumn(KeyTable &table, unsigned lane, const aesmux_aes_key &key) {
  const uint8_t(*source)[16] = key.round_keys;
#pragma GCC unroll 15
  for (size_t r = 0; r < 15; ++r) std::memcpy(table[r][lane], source[r], 16);
}

void WipeKeyColumn(KeyTable &table, unsigned lane) {
#pragma GCC unroll 15
  for (size_t r = 0; r < 15; ++r) std::memset(table[r][lane], 0, 16);
}

}  // namespace

CbcLaneManager::CbcLaneManager(const Tier &tier, uint32_t rounds)
    : tier_(tier),
      rounds_(rounds),
      all_lanes_(static_cast<uint32_t>((uint64_t{1} << tier.mb.lanes) - 1)) {
  std::memset(&lanes_, 0, sizeof(lanes_));
}

CbcLaneManager::~CbcLaneManager() { SecureZero(&lanes_, sizeof(lanes_)); }

size_t CbcLaneManager::busy_lanes() const { return std::popcount(busy_); }

CbcJob *CbcLaneManager::Submit(CbcJob *job) {
  CbcJob *forced = nullptr;
  if (queue_size_ == kMaxPending) forced = Flush();
  job->done = false;
  queue_[(queue_head_ + queue_size_) % kMaxPending] = job;
  ++queue_size_;
  if (job->len < 16) {
    job->done = true;
  } else {
    // The lowest free lane, so that partly filled batches keep their busy
    // lanes together.
    Place(job, std::countr_zero(~busy_ & all_lanes_));
    if (busy_ == all_lanes_) RunBusyLanes();
  }
  return forced != nullptr ? forced : GetCompleted();
}

CbcJob *CbcLaneManager::GetCompleted() {
  if (queue_size_ == 0 || !queue_[queue_head_]->done) return nullptr;
  return PopOldest();
}

bool CbcLaneManager::Remove(const CbcJob *job) {
  size_t index = 0;
  while (index < queue_size_ &&
         queue_[(queue_head_ + index) % kMaxPending] != job) {
    ++index;
  }
  if (index == queue_size_) return false;
  for (uint32_t m = busy_; m != 0; m &= m - 1) {
    const unsigned lane = std::countr_zero(m);
    if (lane_job_[lane] == job) ClearLane(lane);
  }
  // Close the gap, keeping submission order.
  for (; index + 1 < queue_size_; ++index) {
    queue_[(queue_head_ + index) % kMaxPending] =
        queue_[(queue_head_ + index + 1) % kMaxPending];
  }
  queue_[(queue_head_ + queue_size_ - 1) % kMaxPending] = nullptr;
  --queue_size_;
  return true;
}

void CbcLaneManager::ClearLane(unsigned lane) {
  const uint32_t bit = 1u << lane;
  if ((unloaded_ & bit) == 0) {
    WipeKeyColumn(lanes_.round_keys, lane);
    std::memset(lanes_.iv[lane], 0, 16);
  }
  lanes_.in[lane] = nullptr;
  lanes_.out[lane] = nullptr;
  lane_job_[lane] = nullptr;
  lane_remaining_[lane] = 0;
  busy_ &= ~bit;
  unloaded_ &= ~bit;
}

CbcJob *CbcLaneManager::Flush() {
  if (queue_size_ == 0) return nullptr;
  // Every incomplete job holds a lane, so this ends.
  while (!queue_[queue_head_]->done) RunBusyLanes();
  return PopOldest();
}

CbcJob *CbcLaneManager::PopOldest() {
  CbcJob *job = queue_[queue_head_];
  queue_[queue_head_] = nullptr;
  queue_head_ = (queue_head_ + 1) % kMaxPending;
  --queue_size_;
  return job;
}

void CbcLaneManager::Place(CbcJob *job, unsigned lane) {
  lanes_.in[lane] = job->in;
  lanes_.out[lane] = job->out;
  lane_job_[lane] = job;
  lane_remaining_[lane] = job->len & ~size_t{15};
  busy_ |= 1u << lane;
  unloaded_ |= 1u << lane;
}

// Keys and IVs of newly placed lanes are copied in here, just before the
// kernel runs, a whole row of four lanes at a time where all four are new:
// back-to-back stores to one cache line commit faster than stores to 15
// different lines (BENCHMARKS.md, "How does it compare with BoringSSL, per
// record and per kernel?").
void CbcLaneManager::LoadLanes(uint32_t lanes) {
  for (unsigned group = 0; group < 4; ++group) {
    const uint32_t quad = (lanes >> (4 * group)) & 15;
    if (quad == 15) {
      const unsigned first = 4 * group;
      const aesmux_aes_key &k0 = *lane_job_[first]->key;
      const aesmux_aes_key &k1 = *lane_job_[first + 1]->key;
      const aesmux_aes_key &k2 = *lane_job_[first + 2]->key;
      const aesmux_aes_key &k3 = *lane_job_[first + 3]->key;
#pragma GCC unroll 15
      for (size_t r = 0; r < 15; ++r) {
        std::memcpy(lanes_.round_keys[r][first], k0.round_keys[r], 16);
        std::memcpy(lanes_.round_keys[r][first + 1], k1.round_keys[r], 16);
        std::memcpy(lanes_.round_keys[r][first + 2], k2.round_keys[r], 16);
        std::memcpy(lanes_.round_keys[r][first + 3], k3.round_keys[r], 16);
      }
    } else {
      for (uint32_t m = quad; m != 0; m &= m - 1) {
        const unsigned lane = 4 * group + std::countr_zero(m);
        CopyKeyColumn(lanes_.round_keys, lane, *lane_job_[lane]->key);
      }
    }
  }
  for (uint32_t m = lanes; m != 0; m &= m - 1) {
    const unsigned lane = std::countr_zero(m);
    std::memcpy(lanes_.iv[lane], lane_job_[lane]->iv, 16);
  }
}

void CbcLaneManager::RunBusyLanes() {
  size_t shortest = std::numeric_limits<size_t>::max();
  for (uint32_t m = busy_; m != 0; m &= m - 1) {
    shortest = std::min(shortest, lane_remaining_[std::countr_zero(m)]);
  }
  const size_t busy_count = std::popcount(busy_);
  if (busy_count < tier_.mb.min_lanes) {
    // Too few lanes for a multi-buffer call to beat running them one by
    // one. A lane that never ran in the table runs from its job's own IV
    // (and stays unloaded: no key is copied in).
    for (uint32_t m = busy_; m != 0; m &= m - 1) {
      const unsigned lane = std::countr_zero(m);
      const CbcJob *job = lane_job_[lane];
      uint8_t *iv = (unloaded_ >> lane) & 1 ? job->iv : lanes_.iv[lane];
      tier_.mb.cbc_encrypt_one(job->key, iv, lanes_.out[lane],
                               lanes_.in[lane], shortest);
      lanes_.in[lane] += shortest;
      lanes_.out[lane] += shortest;
    }
    kernel_calls_ += busy_count;
  } else {
    const uint32_t busy = CompactLanes();
    if (unloaded_ != 0) {
      LoadLanes(unloaded_);
      unloaded_ = 0;
    }
    const MbKernel &kernel = tier_.mb.KernelFor(busy);
    kernel.cbc_encrypt(&lanes_, busy, shortest, rounds_);
    ++calls_by_kernel_[&kernel - tier_.mb.kernels.data()];
    ++kernel_calls_;
  }
  lanes_filled_ += busy_count;
  uint32_t finished = 0;
  for (uint32_t m = busy_; m != 0; m &= m - 1) {
    const unsigned lane = std::countr_zero(m);
    lane_remaining_[lane] -= shortest;
    if (lane_remaining_[lane] == 0) finished |= 1u << lane;
  }
  if (finished != 0) Retire(finished);
}

// Lanes retire in any order, so a batch whose low lanes finished first can
// have few busy lanes spread up to the widest kernel's. Moving a loaded
// lane costs its key column and chaining value (256 bytes copied, and
// wiped), far less than the idle lanes of a wider call.
uint32_t CbcLaneManager::CompactLanes() {
  const uint32_t count = std::popcount(busy_);
  const size_t width = tier_.mb.KernelFor((uint32_t{1} << count) - 1).lanes;
  const uint32_t low = static_cast<uint32_t>((uint64_t{1} << width) - 1);
  uint32_t free = ~busy_ & low;
  for (uint32_t high = busy_ & ~low; high != 0; high &= high - 1) {
    MoveLane(std::countr_zero(high), std::countr_zero(free));
    free &= free - 1;
  }
  return busy_;
}

// A lane not yet loaded has only its pointers and job in the manager; a
// loaded one also its key column and chaining value, which are wiped where
// they were.
void CbcLaneManager::MoveLane(unsigned from, unsigned to) {
  lanes_.in[to] = lanes_.in[from];
  lanes_.out[to] = lanes_.out[from];
  lane_job_[to] = lane_job_[from];
  lane_remaining_[to] = lane_remaining_[from];
  lane_job_[from] = nullptr;
  lane_remaining_[from] = 0;
  const uint32_t from_bit = 1u << from, to_bit = 1u << to;
  if ((unloaded_ & from_bit) != 0) {
    unloaded_ = (unloaded_ & ~from_bit) | to_bit;
  } else {
#pragma GCC unroll 15
    for (size_t r = 0; r < 15; ++r) {
      std::memcpy(lanes_.round_keys[r][to], lanes_.round_keys[r][from], 16);
    }
    WipeKeyColumn(lanes_.round_keys, from);
    std::memcpy(lanes_.iv[to], lanes_.iv[from], 16);
    std::memset(lanes_.iv[from], 0, 16);
  }
  busy_ = (busy_ & ~from_bit) | to_bit;
}

// Hands the chaining values back and wipes the lanes' round keys and
// chaining values at once, a whole row of four lanes at a time where all
// four finish (see LoadLanes); lanes that never ran in the table have
// nothing there and their chaining value already in the job. Plain stores
// suffice: lanes_ is handed to the kernels again, so the compiler cannot
// drop them (the destructor uses SecureZero).
void CbcLaneManager::Retire(uint32_t lanes) {
  const uint32_t loaded = lanes & ~unloaded_;
  for (uint32_t m = lanes; m != 0; m &= m - 1) {
    const unsigned lane = std::countr_zero(m);
    CbcJob *job = lane_job_[lane];
    if ((loaded >> lane) & 1) {
      std::memcpy(job->iv, lanes_.iv[lane], 16);
      std::memset(lanes_.iv[lane], 0, 16);
    }
    lane_job_[lane] = nullptr;
    job->done = true;
  }
  for (unsigned group = 0; group < 4; ++group) {
    const uint32_t quad = (loaded >> (4 * group)) & 15;
    if (quad == 15) {
#pragma GCC unroll 15
      for (size_t r = 0; r < 15; ++r) {
        std::memset(lanes_.round_keys[r][4 * group], 0, 64);
      }
    } else {
      for (uint32_t m = quad; m != 0; m &= m - 1) {
        WipeKeyColumn(lanes_.round_keys, 4 * group + std::countr_zero(m));
      }
    }
  }
  busy_ &= ~lanes;
  unloaded_ &= ~lanes;
}

}  // namespace aesmux::kernels::mb
