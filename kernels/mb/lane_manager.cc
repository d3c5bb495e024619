#include "kernels/mb/lane_manager.h"

#include <bit>
#include <cstring>
#include <iterator>
#include <limits>

#include "kernels/simd_key.h"

namespace aesmux::kernels::mb {
namespace {

constexpr size_t kKeyRows = std::size(aesmux_aes_key{}.round_keys);

}  // namespace

const MbTier *BestMbTier(CpuFeatures available) {
  for (const MbTier &tier : kMbTiers) {
    if (Supported(tier, available)) return &tier;
  }
  return nullptr;
}

const MbTier *MbTierByName(std::string_view name) {
  for (const MbTier &tier : kMbTiers) {
    if (tier.name == name) return &tier;
  }
  return nullptr;
}

CbcLaneManager::CbcLaneManager(const MbTier &tier, uint32_t rounds)
    : tier_(tier),
      rounds_(rounds),
      all_lanes_(static_cast<uint32_t>((uint64_t{1} << tier.lanes) - 1)) {
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

// All 15 rows are copied and wiped whatever the key size: a fixed count
// unrolls into straight moves (the kernels never read past `rounds`), and
// the pointers are hoisted because byte stores may alias anything. This
// took the manager's own cost from about 63 to 50 cycles per job (16 jobs
// submitted and flushed per round).
void CbcLaneManager::Place(CbcJob *job, unsigned lane) {
  const uint8_t(*source)[16] = job->key->round_keys;
  uint8_t(*table)[16][16] = lanes_.round_keys;
#pragma GCC unroll 15
  for (size_t r = 0; r < kKeyRows; ++r) {
    std::memcpy(table[r][lane], source[r], 16);
  }
  lanes_.in[lane] = job->in;
  lanes_.out[lane] = job->out;
  std::memcpy(lanes_.iv[lane], job->iv, 16);
  lane_job_[lane] = job;
  lane_remaining_[lane] = job->len & ~size_t{15};
  busy_ |= 1u << lane;
}

void CbcLaneManager::RunBusyLanes() {
  size_t shortest = std::numeric_limits<size_t>::max();
  for (uint32_t m = busy_; m != 0; m &= m - 1) {
    shortest = std::min(shortest, lane_remaining_[std::countr_zero(m)]);
  }
  if (std::has_single_bit(busy_)) {
    const unsigned lane = std::countr_zero(busy_);
    aesmux_cbc_encrypt_aesni(lane_job_[lane]->key, lanes_.iv[lane],
                             lanes_.out[lane], lanes_.in[lane], shortest);
  } else {
    tier_.cbc_encrypt(&lanes_, busy_, shortest, rounds_);
  }
  ++kernel_calls_;
  lanes_filled_ += std::popcount(busy_);
  for (uint32_t m = busy_; m != 0; m &= m - 1) {
    const unsigned lane = std::countr_zero(m);
    lane_remaining_[lane] -= shortest;
    if (lane_remaining_[lane] == 0) Retire(lane);
  }
}

void CbcLaneManager::Retire(unsigned lane) {
  CbcJob *job = lane_job_[lane];
  std::memcpy(job->iv, lanes_.iv[lane], 16);
  // Plain stores suffice: lanes_ is handed to the kernels again, so the
  // compiler cannot drop them (the destructor uses SecureZero).
  std::memset(lanes_.iv[lane], 0, 16);
  uint8_t(*table)[16][16] = lanes_.round_keys;
#pragma GCC unroll 15
  for (size_t r = 0; r < kKeyRows; ++r) std::memset(table[r][lane], 0, 16);
  lanes_.in[lane] = nullptr;
  lanes_.out[lane] = nullptr;
  lane_job_[lane] = nullptr;
  busy_ &= ~(1u << lane);
  job->done = true;
}

}  // namespace aesmux::kernels::mb
