// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The lane manager against OpenSSL's default provider: random mixes of
// keys, key sizes (one manager per size), IVs and lengths up to 256 KiB,
// submitted in random orders with random polls and flushes; completion in
// submission order; partial flushes; reuse after a flush; the pending
// limit; statistics; the narrowest kernel for the busy lanes, moving high
// lanes down; key material wiped as lanes retire; removing a job.
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <new>
#include <vector>

#include "tests/kernels/mb_test_support.h"

namespace aesmux::kernels::testing {
namespace {

using mb::CbcJob;
using mb::CbcLaneManager;

// One job with its inputs, guarded buffers and expected results.
struct TestJob {
  Bytes key;
  aesmux_aes_key enc;
  Bytes iv_in;
  std::array<uint8_t, 16> iv;
  Bytes plaintext;
  Bytes expected;
  std::unique_ptr<CallBuffers> buffers;
  CbcJob job;
};

// Storage for an object built with placement new, so its bytes can be
// inspected after destruction.
template <typename T>
struct Zeroed {
  alignas(T) unsigned char bytes[sizeof(T)] = {};
  bool contains(const uint8_t *needle, size_t len) const {
    return std::search(std::begin(bytes), std::end(bytes), needle,
                       needle + len) != std::end(bytes);
  }
};

class MbLaneManagerTest : public MbTierTest {
 protected:
  // A job of `len` bytes under `key`, placed at random (in place or not,
  // misaligned), with its expected ciphertext.
  std::unique_ptr<TestJob> MakeJob(const Bytes &key, size_t len) {
    auto t = std::make_unique<TestJob>();
    t->key = key;
    t->enc = ExpandKey(key);
    t->iv_in = rng_.RandomBytes(16);
    std::copy(t->iv_in.begin(), t->iv_in.end(), t->iv.begin());
    t->plaintext = rng_.RandomBytes(len);
    t->expected = ReferenceCbcEncrypt(key, t->iv_in, t->plaintext);
    const Placement placement{rng_.Uniform(0, 15), rng_.Uniform(0, 15),
                              rng_.Coin()};
    t->buffers = std::make_unique<CallBuffers>(t->plaintext, placement);
    t->job.key = &t->enc;
    t->job.iv = t->iv.data();
    t->job.out = t->buffers->out();
    t->job.in = t->buffers->in();
    t->job.len = len;
    t->job.user = t.get();
    return t;
  }

  std::unique_ptr<TestJob> MakeJob(size_t key_len, size_t len) {
    return MakeJob(rng_.RandomBytes(key_len), len);
  }

  // Flushes `manager` until it is empty, expecting the jobs from
  // jobs[returned] on back in submission order, then every job done.
  static void FlushInOrder(CbcLaneManager &manager,
                           const std::vector<std::unique_ptr<TestJob>> &jobs,
                           size_t returned) {
    while (CbcJob *job = manager.Flush()) {
      ASSERT_EQ(job, &jobs[returned]->job);
      ++returned;
    }
    ASSERT_EQ(returned, jobs.size());
    for (auto &t : jobs) CheckDone(*t);
  }

  // Checks a returned job's output, IV and untouched fields.
  static void CheckDone(const TestJob &t) {
    SCOPED_TRACE(::testing::Message()
                 << "key_len=" << t.key.size() << " len=" << t.job.len);
    ASSERT_TRUE(t.job.done);
    ASSERT_EQ(t.job.user, &t);
    ASSERT_EQ(t.job.key, &t.enc);
    ASSERT_TRUE(SameBytes(t.buffers->output(), t.expected));
    ASSERT_TRUE(t.buffers->GuardsIntact());
    const Bytes next_iv = t.job.len == 0
                              ? t.iv_in
                              : Bytes(t.expected.end() - 16, t.expected.end());
    ASSERT_TRUE(SameBytes(t.iv, next_iv));
  }

  // A length: mostly records up to 16 KiB, some large, a few up to 256 KiB,
  // a few empty.
  size_t RandomLength() {
    const size_t kind = rng_.Uniform(0, 99);
    size_t max = kind < 5    ? 0
                 : kind < 45 ? 1024
                 : kind < 85 ? 16384
                 : kind < 96 ? 65536
                             : 262144;
    return 16 * rng_.Uniform(0, max / 16);
  }

  static uint32_t RoundsFor(size_t key_len) {
    return static_cast<uint32_t>(6 + key_len / 4);
  }
};

// Hundreds of jobs over three managers (one per key size) with keys drawn
// from a small pool (so lanes often share a key), submitted in random order
// with random GetCompleted and Flush calls in between; every manager must
// return its jobs in its submission order, each matching OpenSSL.
TEST_P(MbLaneManagerTest, RandomMixesMatchOpenSslAndCompleteInOrder) {
  std::map<size_t, std::unique_ptr<CbcLaneManager>> managers;
  std::map<size_t, std::deque<TestJob *>> expected_order;
  std::map<size_t, std::vector<Bytes>> key_pool;
  for (size_t key_len : kKeySizes) {
    managers[key_len] =
        std::make_unique<CbcLaneManager>(tier(), RoundsFor(key_len));
    for (int i = 0; i < 5; ++i)
      key_pool[key_len].push_back(rng_.RandomBytes(key_len));
  }
  std::vector<std::unique_ptr<TestJob>> jobs;
  for (int i = 0; i < 600; ++i) {
    const size_t key_len = kKeySizes[rng_.Uniform(0, 2)];
    const Bytes &key = key_pool[key_len][rng_.Uniform(0, 4)];
    jobs.push_back(
        MakeJob(rng_.Coin() ? key : rng_.RandomBytes(key_len), RandomLength()));
  }
  size_t returned = 0;
  auto take = [&](size_t key_len, CbcJob *job) {
    if (job == nullptr) return;
    auto &order = expected_order[key_len];
    ASSERT_FALSE(order.empty());
    ASSERT_EQ(job->user, order.front()) << "returned out of order";
    order.pop_front();
    CheckDone(*static_cast<TestJob *>(job->user));
    ++returned;
  };
  for (auto &t : jobs) {
    const size_t key_len = t->key.size();
    CbcLaneManager &manager = *managers[key_len];
    expected_order[key_len].push_back(t.get());
    take(key_len, manager.Submit(&t->job));
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_LE(manager.pending(), CbcLaneManager::kMaxPending);
    ASSERT_LT(manager.busy_lanes(), manager.lanes());
    const size_t action = rng_.Uniform(0, 9);
    const size_t other = kKeySizes[rng_.Uniform(0, 2)];
    if (action < 3) {
      take(other, managers[other]->GetCompleted());
    } else if (action < 4) {
      take(other, managers[other]->Flush());
    } else if (action < 5) {
      while (CbcJob *job = managers[other]->Flush()) take(other, job);
      ASSERT_EQ(managers[other]->pending(), 0u);
    }
    ASSERT_FALSE(HasFatalFailure());
  }
  for (size_t key_len : kKeySizes) {
    while (CbcJob *job = managers[key_len]->Flush()) take(key_len, job);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(managers[key_len]->pending(), 0u);
    EXPECT_EQ(managers[key_len]->busy_lanes(), 0u);
    EXPECT_TRUE(expected_order[key_len].empty());
  }
  EXPECT_EQ(returned, jobs.size());
}

// A long job submitted first holds up the return of the short jobs behind
// it even though they finish first: GetCompleted returns nothing, Flush
// returns the long job, then the others come back in order without more
// kernel calls.
TEST_P(MbLaneManagerTest, LaterJobsThatFinishFirstWaitForTheOldest) {
  CbcLaneManager manager(tier(), 10);
  std::vector<std::unique_ptr<TestJob>> jobs;
  jobs.push_back(MakeJob(16, 16 * 1024));
  for (size_t i = 1; i < manager.lanes(); ++i) jobs.push_back(MakeJob(16, 64));
  for (size_t i = 0; i + 1 < jobs.size(); ++i) {
    EXPECT_EQ(manager.Submit(&jobs[i]->job), nullptr);
  }
  EXPECT_EQ(manager.kernel_calls(), 0u) << "ran before the lanes were full";
  // The last lane fills: one call of 64 bytes retires every short job.
  EXPECT_EQ(manager.Submit(&jobs.back()->job), nullptr);
  EXPECT_EQ(manager.kernel_calls(), 1u);
  EXPECT_EQ(manager.lanes_filled(), manager.lanes());
  EXPECT_EQ(manager.busy_lanes(), 1u);
  for (size_t i = 1; i < jobs.size(); ++i) EXPECT_TRUE(jobs[i]->job.done);
  EXPECT_FALSE(jobs[0]->job.done);
  EXPECT_EQ(manager.GetCompleted(), nullptr);
  EXPECT_EQ(manager.pending(), jobs.size());

  EXPECT_EQ(manager.Flush(), &jobs[0]->job);
  CheckDone(*jobs[0]);
  // The lone remaining lane ran on the single-stream kernel: one more call.
  EXPECT_EQ(manager.kernel_calls(), 2u);
  EXPECT_EQ(manager.lanes_filled(), manager.lanes() + 1);
  for (size_t i = 1; i < jobs.size(); ++i) {
    EXPECT_EQ(manager.GetCompleted(), &jobs[i]->job);
    CheckDone(*jobs[i]);
  }
  EXPECT_EQ(manager.GetCompleted(), nullptr);
  EXPECT_EQ(manager.Flush(), nullptr);
  EXPECT_EQ(manager.kernel_calls(), 2u);
}

// As many equal jobs as lanes: the last Submit runs one kernel call that
// completes them all and returns the first; the rest are then returned
// without running anything.
TEST_P(MbLaneManagerTest, FullBatchOfEqualJobsRunsOnce) {
  for (size_t key_len : kKeySizes) {
    CbcLaneManager manager(tier(), RoundsFor(key_len));
    std::vector<std::unique_ptr<TestJob>> jobs;
    for (size_t i = 0; i < manager.lanes(); ++i) {
      jobs.push_back(MakeJob(key_len, 1024));
    }
    for (size_t i = 0; i + 1 < jobs.size(); ++i) {
      EXPECT_EQ(manager.Submit(&jobs[i]->job), nullptr);
    }
    EXPECT_EQ(manager.Submit(&jobs.back()->job), &jobs[0]->job);
    EXPECT_EQ(manager.kernel_calls(), 1u);
    EXPECT_EQ(manager.lanes_filled(), manager.lanes());
    EXPECT_EQ(manager.busy_lanes(), 0u);
    CheckDone(*jobs[0]);
    for (size_t i = 1; i < jobs.size(); ++i) {
      EXPECT_EQ(manager.GetCompleted(), &jobs[i]->job);
      CheckDone(*jobs[i]);
    }
    EXPECT_EQ(manager.pending(), 0u);
    EXPECT_EQ(manager.kernel_calls(), 1u);
  }
}

// Fewer jobs than lanes: nothing runs until Flush, which runs the partly
// filled lanes (idle lanes masked off) until the oldest job is complete and
// returns only that one; later flushes return the rest in order.
TEST_P(MbLaneManagerTest, PartialFlushReturnsTheOldestOnly) {
  CbcLaneManager manager(tier(), 14);
  std::vector<std::unique_ptr<TestJob>> jobs;
  for (size_t len : {512, 160, 2048}) jobs.push_back(MakeJob(32, len));
  for (auto &t : jobs) EXPECT_EQ(manager.Submit(&t->job), nullptr);
  EXPECT_EQ(manager.kernel_calls(), 0u);
  EXPECT_EQ(manager.pending(), 3u);
  EXPECT_EQ(manager.busy_lanes(), 3u);
  EXPECT_EQ(manager.GetCompleted(), nullptr);

  EXPECT_EQ(manager.Flush(), &jobs[0]->job);
  CheckDone(*jobs[0]);
  // 160 bytes on three lanes, then 352 more on two (one call, or one per
  // lane below the tier's min_lanes); the third is part done.
  EXPECT_EQ(manager.kernel_calls(), tier().mb.min_lanes > 2 ? 3u : 2u);
  EXPECT_EQ(manager.lanes_filled(), 5u);
  EXPECT_EQ(manager.pending(), 2u);
  EXPECT_TRUE(jobs[1]->job.done);
  EXPECT_FALSE(jobs[2]->job.done);
  EXPECT_EQ(manager.busy_lanes(), 1u);

  EXPECT_EQ(manager.GetCompleted(), &jobs[1]->job);
  CheckDone(*jobs[1]);
  EXPECT_EQ(manager.Flush(), &jobs[2]->job);
  CheckDone(*jobs[2]);
  EXPECT_EQ(manager.Flush(), nullptr);
  EXPECT_EQ(manager.pending(), 0u);
}

// After everything has been flushed the manager takes new work as if new,
// several times over.
TEST_P(MbLaneManagerTest, ReusableAfterFlushingEverything) {
  CbcLaneManager manager(tier(), 12);
  for (int round = 0; round < 5; ++round) {
    std::vector<std::unique_ptr<TestJob>> jobs;
    const size_t count = rng_.Uniform(1, 2 * manager.lanes() + 3);
    size_t returned = 0;
    for (size_t i = 0; i < count; ++i) {
      jobs.push_back(MakeJob(24, 16 * rng_.Uniform(0, 300)));
      if (CbcJob *job = manager.Submit(&jobs.back()->job)) {
        ASSERT_EQ(job, &jobs[returned]->job);
        ++returned;
      }
    }
    ASSERT_NO_FATAL_FAILURE(FlushInOrder(manager, jobs, returned));
    ASSERT_EQ(manager.busy_lanes(), 0u);
  }
}

// Two lanes run (one by one where the tier's min_lanes says so, their keys
// never copied into the table) until the first job completes; the second,
// part done, then joins a full batch and must continue from its chaining
// value.
TEST_P(MbLaneManagerTest, LanesThatRanAloneJoinABatchLater) {
  CbcLaneManager manager(tier(), 10);
  std::vector<std::unique_ptr<TestJob>> jobs;
  jobs.push_back(MakeJob(16, 272));
  jobs.push_back(MakeJob(16, 4096));
  EXPECT_EQ(manager.Submit(&jobs[0]->job), nullptr);
  EXPECT_EQ(manager.Submit(&jobs[1]->job), nullptr);
  EXPECT_EQ(manager.Flush(), &jobs[0]->job);
  CheckDone(*jobs[0]);
  EXPECT_FALSE(jobs[1]->job.done);
  EXPECT_EQ(manager.kernel_calls(), tier().mb.min_lanes > 2 ? 2u : 1u);
  for (size_t i = 1; i < manager.lanes(); ++i) {
    jobs.push_back(MakeJob(16, 1024));
    EXPECT_EQ(manager.Submit(&jobs.back()->job), nullptr);
  }
  FlushInOrder(manager, jobs, 1);
}

// A batch runs on the narrowest kernel that has every busy lane: few jobs
// on the x4 kernel, 5 to 7 on the x8 (below every tier's widest).
TEST_P(MbLaneManagerTest, FewJobsRunOnANarrowerKernel) {
  for (size_t count : {size_t{4}, size_t{5}, size_t{7}}) {
    SCOPED_TRACE(::testing::Message() << "jobs=" << count);
    if (count < tier().mb.min_lanes) continue;
    CbcLaneManager manager(tier(), 10);
    std::vector<std::unique_ptr<TestJob>> jobs;
    for (size_t i = 0; i < count; ++i) jobs.push_back(MakeJob(16, 1024));
    for (auto &t : jobs) EXPECT_EQ(manager.Submit(&t->job), nullptr);
    size_t returned = 0;
    while (manager.Flush() != nullptr) ++returned;
    EXPECT_EQ(returned, count);
    for (auto &t : jobs) CheckDone(*t);
    EXPECT_EQ(manager.kernel_calls(), 1u);
    const size_t want = count <= 4 ? 0 : 1;
    EXPECT_EQ(manager.calls_of_kernel(want), 1u)
        << "expected the x" << tier().mb.kernels[want].lanes << " kernel";
  }
}

// When the low lanes retire first, the busy high lanes move down (key,
// chaining value and all) and continue on a narrower kernel; their old
// slots are wiped.
TEST_P(MbLaneManagerTest, HighLanesLeftAloneMoveDownToANarrowerKernel) {
  for (size_t key_len : kKeySizes) {
    SCOPED_TRACE(::testing::Message() << "key_len=" << key_len);
    Zeroed<CbcLaneManager> storage;
    auto *manager =
        new (storage.bytes) CbcLaneManager(tier(), RoundsFor(key_len));
    const size_t lanes = manager->lanes();
    const size_t kept = std::max<size_t>(tier().mb.min_lanes, 3);
    std::vector<std::unique_ptr<TestJob>> jobs;
    for (size_t i = 0; i < lanes; ++i) {
      // The top `kept` lanes run 8 times longer than the others.
      jobs.push_back(MakeJob(key_len, i + kept >= lanes ? 8192 : 1024));
    }
    size_t returned = 0;
    for (auto &t : jobs) returned += manager->Submit(&t->job) != nullptr;
    ASSERT_EQ(manager->busy_lanes(), kept);
    ASSERT_EQ(manager->calls_of_kernel(tier().mb.kernels.size() - 1), 1u);
    while (manager->Flush() != nullptr) ++returned;
    EXPECT_EQ(returned, lanes);
    for (auto &t : jobs) CheckDone(*t);
    EXPECT_EQ(manager->kernel_calls(), 2u);
    EXPECT_EQ(manager->calls_of_kernel(0), 1u)
        << "the remaining lanes did not move to the x4 kernel";
    for (auto &t : jobs) {
      for (uint32_t r = 0; r <= t->enc.rounds; ++r) {
        EXPECT_FALSE(storage.contains(t->enc.round_keys[r], 16));
      }
    }
    manager->~CbcLaneManager();
  }
}

// Empty jobs complete at once but still come back in their place.
TEST_P(MbLaneManagerTest, EmptyJobsKeepTheirPlaceInLine) {
  CbcLaneManager manager(tier(), 10);
  auto slow = MakeJob(16, 4096);
  auto empty = MakeJob(16, 0);
  EXPECT_EQ(manager.Submit(&slow->job), nullptr);
  EXPECT_EQ(manager.Submit(&empty->job), nullptr);
  EXPECT_TRUE(empty->job.done);
  EXPECT_EQ(manager.Flush(), &slow->job);
  EXPECT_EQ(manager.GetCompleted(), &empty->job);
  CheckDone(*slow);
  CheckDone(*empty);
  auto alone = MakeJob(16, 0);
  EXPECT_EQ(manager.Submit(&alone->job), &alone->job);
  EXPECT_EQ(manager.kernel_calls(), 1u);
}

// Every job may use the same key schedule object (one connection's key).
TEST_P(MbLaneManagerTest, JobsSharingOneKeyObject) {
  CbcLaneManager manager(tier(), 10);
  const Bytes key = rng_.RandomBytes(16);
  std::vector<std::unique_ptr<TestJob>> jobs;
  for (int i = 0; i < 50; ++i) jobs.push_back(MakeJob(key, RandomLength()));
  for (auto &t : jobs) t->job.key = &jobs[0]->enc;
  size_t returned = 0;
  for (auto &t : jobs) {
    if (manager.Submit(&t->job) != nullptr) ++returned;
  }
  while (manager.Flush() != nullptr) ++returned;
  EXPECT_EQ(returned, jobs.size());
  for (auto &t : jobs) {
    t->job.key = &t->enc;  // for CheckDone
    CheckDone(*t);
  }
}

// With kMaxPending jobs pending behind an incomplete one, the next Submit
// completes and returns the oldest, so pending never exceeds the limit.
TEST_P(MbLaneManagerTest, SubmitBeyondThePendingLimitReturnsTheOldest) {
  CbcLaneManager manager(tier(), 10);
  std::vector<std::unique_ptr<TestJob>> jobs;
  jobs.push_back(MakeJob(16, 65536));
  EXPECT_EQ(manager.Submit(&jobs[0]->job), nullptr);
  for (size_t i = 1; i < CbcLaneManager::kMaxPending; ++i) {
    jobs.push_back(MakeJob(16, 16 * (i % 4)));
    ASSERT_EQ(manager.Submit(&jobs.back()->job), nullptr);
  }
  EXPECT_EQ(manager.pending(), CbcLaneManager::kMaxPending);
  jobs.push_back(MakeJob(16, 32));
  EXPECT_EQ(manager.Submit(&jobs.back()->job), &jobs[0]->job);
  EXPECT_EQ(manager.pending(), CbcLaneManager::kMaxPending);
  FlushInOrder(manager, jobs, 1);
}

// Round keys and chaining values are in the manager while their job runs
// and gone as soon as it retires, while other lanes still run; the
// destructor wipes the rest.
TEST_P(MbLaneManagerTest, KeyMaterialIsWipedWhenLanesRetire) {
  Zeroed<CbcLaneManager> storage;
  auto *manager = new (storage.bytes) CbcLaneManager(tier(), 14);
  std::vector<std::unique_ptr<TestJob>> jobs;
  jobs.push_back(MakeJob(32, 65536));  // still running after the first call
  for (size_t i = 1; i < manager->lanes(); ++i) {
    jobs.push_back(MakeJob(32, 1024));
  }
  for (auto &t : jobs) manager->Submit(&t->job);
  ASSERT_EQ(manager->busy_lanes(), 1u);
  auto holds_key = [&](const TestJob &t) {
    for (uint32_t r = 0; r <= 14; ++r) {
      if (storage.contains(t.enc.round_keys[r], 16)) return true;
    }
    return false;
  };
  EXPECT_TRUE(holds_key(*jobs[0])) << "the checks below could not fail";
  for (size_t i = 1; i < jobs.size(); ++i) {
    EXPECT_TRUE(jobs[i]->job.done);
    EXPECT_FALSE(holds_key(*jobs[i])) << "job " << i;
    EXPECT_FALSE(storage.contains(jobs[i]->iv.data(), 16))
        << "job " << i << "'s chaining value";
  }
  while (manager->Flush() != nullptr) {
  }
  EXPECT_FALSE(holds_key(*jobs[0]));
  EXPECT_FALSE(storage.contains(jobs[0]->iv.data(), 16));
  manager->~CbcLaneManager();
  for (auto &t : jobs) EXPECT_FALSE(holds_key(*t));
}

// Remove takes a job out wherever it is (in a lane that has run part of
// it, queued in a lane not yet loaded, or complete behind an older one):
// it is never returned, an incomplete one's lane is wiped and its IV left
// as it was, and the others complete in order.
TEST_P(MbLaneManagerTest, RemovedJobsAreNeverReturnedAndTheirLanesWiped) {
  Zeroed<CbcLaneManager> storage;
  auto *manager = new (storage.bytes) CbcLaneManager(tier(), 10);
  std::vector<std::unique_ptr<TestJob>> jobs;
  jobs.push_back(MakeJob(16, 65536));  // still running after the first call
  for (size_t i = 1; i < manager->lanes() + 3; ++i) {
    jobs.push_back(MakeJob(16, 1024));
  }
  for (auto &t : jobs) manager->Submit(&t->job);
  TestJob &running = *jobs[0];           // loaded, part of it run
  TestJob &complete = *jobs[1];          // done, behind the oldest
  TestJob &queued = *jobs.back();        // in a lane, not yet loaded
  ASSERT_TRUE(complete.job.done);
  ASSERT_FALSE(queued.job.done);
  auto holds_key = [&](const TestJob &t) {
    for (uint32_t r = 0; r <= 10; ++r) {
      if (storage.contains(t.enc.round_keys[r], 16)) return true;
    }
    return false;
  };
  EXPECT_TRUE(holds_key(running)) << "the check below could not fail";
  const size_t busy = manager->busy_lanes();

  EXPECT_TRUE(manager->Remove(&running.job));
  EXPECT_TRUE(manager->Remove(&complete.job));
  EXPECT_TRUE(manager->Remove(&queued.job));
  EXPECT_FALSE(manager->Remove(&queued.job));
  EXPECT_EQ(manager->busy_lanes(), busy - 2);
  EXPECT_EQ(manager->pending(), jobs.size() - 3);
  EXPECT_FALSE(holds_key(running));
  EXPECT_FALSE(running.job.done);
  EXPECT_TRUE(SameBytes(running.iv, running.iv_in)) << "IV not updated";

  std::vector<std::unique_ptr<TestJob>> rest;
  for (auto &t : jobs) {
    if (t.get() != &running && t.get() != &complete && t.get() != &queued) {
      rest.push_back(std::move(t));
    }
  }
  FlushInOrder(*manager, rest, 0);
  EXPECT_FALSE(queued.job.done);
  EXPECT_TRUE(SameBytes(queued.iv, queued.iv_in));
  manager->~CbcLaneManager();
}

AESMUX_INSTANTIATE_FOR_ALL_MB_TIERS(MbLaneManagerTest);

}  // namespace
}  // namespace aesmux::kernels::testing
