// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Combining of CBC encryptions from synchronous callers (cbc_batch.h): the
// threads in flight that the router asks about, when batching threads
// rests, which shard a thread uses (the protocol within a shard:
// internal/shard.h), the process's combiner and its life; and
// EncryptCbc(), which sends a request here or, inside an ASYNC job, to
// async_jobs.cc.

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>

#include "provider/batch/internal/lanes.h"
#include "provider/batch/internal/shard.h"
#include "provider/core/process.h"
#include "provider/core/thread_exit.h"

namespace aesmux::batch {

using internal::ProcessCpuNanos;
using internal::RunAlone;
using internal::Shard;
using internal::Slot;
using internal::SoloTime;

namespace {

constexpr size_t kMaxShards = 64;

// Batching threads' requests of one size class (of the same bit width, so
// that 8 KiB records that lose do not stop 64 KiB ones that win) rests
// (the router's ThreadsRest(): they run alone) for kRestNs when
// kVainBeforeRest requests in a row waited for peers in vain, when more
// than kLateInWindow of kWindow batched requests finished late, past their
// latency budget (internal/shard.h; at once if more than kLateAtOnce did),
// or when more than half of them took longer than their share of the CPUs
// (batching lost throughput): on a machine
// loaded with other work, a waiting thread yields the CPU to other
// processes for whole time slices, and the promise is about the 99th
// percentile. Requests that finish during a rest (those that were waiting
// when it began, whose peers now run alone) and the first kGrace batched
// requests after one (they meet threads still finishing a request they
// run alone) are not judged.
// Each rest is twice as long as the one before, up to kMaxRestNs, so that
// trying again (a handful of late requests) costs well under a percent of
// the threads' time however long batching keeps losing; a window without a
// late request halves it again.
// After a rest of at least kJudgedRestNs, batching tries again only if
// the process had the machine's CPUs to itself meanwhile (its threads got
// at least 1 - 1/kOtherWorkShare of the rest's length on every usable
// CPU; callers running alone keep them busy); else it rests as long
// again. Beside other busy processes a trial costs more than a rest can
// repay, and it cannot be made cheap: the first requests batched after a
// rest wait out time slices on an idle machine too (threads that yield
// again after running alone wait behind each other), so lateness alone
// cannot tell other work apart from the change of mode. Shorter rests
// are not judged so: a running thread's CPU time is brought up to date at
// the scheduler's tick (every 1 to 10 ms).
constexpr uint32_t kVainBeforeRest = 4;
constexpr uint32_t kWindow = 1024;
constexpr uint32_t kLateInWindow = 8;
constexpr uint32_t kLateAtOnce = 16;
constexpr uint32_t kGrace = 64;
constexpr uint64_t kRestNs = 2000000;
constexpr uint64_t kMaxRestNs = 250000000;
constexpr uint64_t kJudgedRestNs = 30000000;
constexpr uint64_t kOtherWorkShare = 20;
constexpr size_t kSizeClasses = 24;  // bit widths 0 .. 23, and above

// Whether batching threads' requests of one size class rests, and the
// verdicts it rests on.
class Health {
 public:
  // `cpus`: the CPUs the process may use.
  bool Rests(uint32_t cpus) {
    const uint64_t until = rest_until_.load(std::memory_order_relaxed);
    if (until == 0) return false;
    const uint64_t now = internal::NowNanos();
    return now < until || RestEnds(now, until, cpus);
  }
  void Count(internal::Verdict verdict);

 private:
  // Batching rests for rest_ns_, from now.
  void Rest();
  // The rest that lasted until `until` is over at `now`: another rest if
  // other processes kept the CPUs busy, else a trial. Whether batching
  // rests.
  [[gnu::noinline]] bool RestEnds(uint64_t now, uint64_t until,
                                  uint32_t cpus);
  bool InRest() const {
    const uint64_t until = rest_until_.load(std::memory_order_relaxed);
    return until != 0 && internal::NowNanos() < until;
  }

  // kVain verdicts in a row; batched requests, late ones and ones over
  // their share in this window; batched requests after a rest not to
  // judge.
  std::atomic<uint32_t> vain_{0};
  std::atomic<uint32_t> window_{0};
  std::atomic<uint32_t> window_late_{0};
  std::atomic<uint32_t> window_over_share_{0};
  std::atomic<int32_t> grace_{0};
  std::atomic<uint64_t> rest_until_{0};     // NowNanos(); 0: not resting
  std::atomic<uint64_t> rest_ns_{kRestNs};  // the next rest's length
  // When the rest under way began: NowNanos(), ProcessCpuNanos().
  std::atomic<uint64_t> rest_began_{0};
  std::atomic<uint64_t> rest_began_cpu_{0};
  std::mutex rest_ends_mutex_;  // RestEnds() runs in one caller at a time
};

Health &HealthFor(std::array<Health, kSizeClasses> &health, uint64_t len) {
  return health[std::min<size_t>(std::bit_width(len), kSizeClasses - 1)];
}

}  // namespace

// The process's combiner. A forked child replaces the one it inherits the
// first time it would batch (its state is the parent's threads': requests
// published that never come back, threads counted that are not there).
class Combiner {
 public:
  // Null if there is no memory for it.
  static Combiner *Create(Combiner *inherited = nullptr);

  // No thread has a lease on it or is counted in flight.
  bool Idle() const;

  // Inherited by a forked child, which makes its own.
  bool Stale() const { return generation_ != core::ProcessGeneration(); }

  // Counts the calling thread in flight (CallerProbe) until EncryptCbc
  // has served its request; returns how many others were.
  uint32_t Enter() {
    return callers_.fetch_add(1, std::memory_order_relaxed);
  }
  void Leave() { callers_.fetch_sub(1, std::memory_order_relaxed); }

  // Whether batching requests of `len` bytes rests.
  bool Resting(uint64_t len) {
    return HealthFor(health_, len).Rests(usable_cpus_);
  }

  Ran Encrypt(const kernels::Tier &tier, const CbcRequest &request);

 private:
  struct Lease;
  // Null if there is no memory for a new lease.
  Lease *ThisThreadLease();
  // A thread's lease, released when the thread exits (core/thread_exit.h).
  static void ReleaseLease(void *lease);
  // The calling thread's slot in shard `index`; null if there is no memory
  // for a new one.
  Slot *SlotIn(Lease &lease, size_t index);

  explicit Combiner(Combiner *inherited) : inherited_(inherited) {}

  // The shard of the calling thread's CPU.
  size_t ShardOfThisCpu() const;

  std::atomic<uint32_t> callers_{0};  // threads counted in flight
  std::array<Health, kSizeClasses> health_;
  std::unique_ptr<Shard[]> shards_;
  uint32_t usable_cpus_ = 1;
  size_t num_shards_ = 0;
  const uint64_t generation_ = core::ProcessGeneration();
  // In a forked child, the combiner it replaced (and that one's), never
  // freed: the forking thread's lease may point into it.
  Combiner *const inherited_;
};

Combiner *Combiner::Create(Combiner *inherited) {
  std::unique_ptr<Combiner> combiner(new (std::nothrow) Combiner(inherited));
  if (combiner == nullptr) return nullptr;
  combiner->usable_cpus_ = std::max(core::UsableCpus(), 1u);
  combiner->num_shards_ = std::min<size_t>(combiner->usable_cpus_, kMaxShards);
  combiner->shards_.reset(new (std::nothrow) Shard[combiner->num_shards_]);
  return combiner->shards_ != nullptr ? combiner.release() : nullptr;
}

// The calling thread's place: its slot in each shard it has used, given
// back for reuse when the thread exits.
struct Combiner::Lease {
  explicit Lease(Combiner &combiner) : owner(combiner) {}
  Lease(const Lease &) = delete;
  Lease &operator=(const Lease &) = delete;
  ~Lease() {
    if (shard < owner.num_shards_) owner.shards_[shard].Leave();
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] != nullptr) owner.shards_[i].Release(*slots[i]);
    }
  }

  Combiner &owner;
  size_t shard = SIZE_MAX;  // the shard joined, if any
  std::array<Slot *, kMaxShards> slots{};
};

// A lease points into its combiner from its thread's first request until
// the thread exits, and holds no slot in between after withdrawing a
// request (Shard::Run) or when no slot could be made for it (SlotIn): slots
// alone would let the combiner go under it. But a lease is joined to one
// shard for that whole time (Encrypt joins before anything else and only
// moves it; ~Lease leaves), so a combiner none of whose shards counts a
// thread or a slot in use has no lease left in it. ~Lease's last touch of
// the combiner is Leave() or a slot's Release(), each a release store that
// Shard::Idle() reads with acquire, so once Idle() holds nothing touches
// the combiner again.
bool Combiner::Idle() const {
  return callers_.load(std::memory_order_acquire) == 0 &&
         std::all_of(shards_.get(), shards_.get() + num_shards_,
                     [](const Shard &shard) { return shard.Idle(); });
}

Combiner::Lease *Combiner::ThisThreadLease() {
  // A lease ends with its combiner only in a forked child, where the
  // forking thread gives up its lease on the inherited one (never freed);
  // elsewhere its combiner is not freed while it lasts (Idle()), so no
  // other can be made at its address. On the heap,
  // from the thread's core::ThreadSlot::kCombinerLease, not in
  // thread-local storage itself: a lease is 0.5 KiB, and the module's
  // thread-local block must stay within glibc's optional static TLS
  // surplus (512 bytes), or every thread-local access of the module (the
  // per-thread statistics counted per request) goes through
  // _dl_tlsdesc_dynamic, a call where the static block needs none.
  constexpr core::ThreadSlot kSlot = core::ThreadSlot::kCombinerLease;
  auto *lease = static_cast<Lease *>(core::ThreadObject(kSlot));
  if (lease != nullptr && &lease->owner == this) return lease;
  if (lease != nullptr) {
    core::ClearThreadObject(kSlot);
    delete lease;
  }
  lease = new (std::nothrow) Lease(*this);
  if (lease != nullptr && !core::SetThreadObject(kSlot, lease, ReleaseLease)) {
    delete lease;
    lease = nullptr;
  }
  return lease;
}

void Combiner::ReleaseLease(void *lease) { delete static_cast<Lease *>(lease); }

size_t Combiner::ShardOfThisCpu() const {
  // For a CPU the process may run on, its rank among them, so that each
  // has a shard of its own however the CPUs are numbered.
  const int cpu = sched_getcpu();
  if (cpu < 0) return 0;
  return core::UsableCpuRank(static_cast<uint32_t>(cpu)) % num_shards_;
}

Slot *Combiner::SlotIn(Lease &lease, size_t index) {
  Slot *&slot = lease.slots[index];
  if (slot == nullptr) {
    slot = shards_[index].Reuse();
    if (slot == nullptr) slot = shards_[index].Add();
  }
  return slot;
}

void Health::Count(internal::Verdict verdict) {
  using internal::Verdict;
  if (verdict == Verdict::kNone || InRest()) return;
  if (verdict == Verdict::kVain) {
    if (vain_.fetch_add(1, std::memory_order_relaxed) + 1 >= kVainBeforeRest) {
      Rest();
    }
    return;
  }
  if (vain_.load(std::memory_order_relaxed) != 0) {
    vain_.store(0, std::memory_order_relaxed);
  }
  if (grace_.load(std::memory_order_relaxed) > 0 &&
      grace_.fetch_sub(1, std::memory_order_relaxed) > 0) {
    return;
  }
  if (verdict == Verdict::kLate &&
      window_late_.fetch_add(1, std::memory_order_relaxed) + 1 > kLateAtOnce) {
    Rest();
    return;
  }
  if (verdict == Verdict::kOverShare) {
    window_over_share_.fetch_add(1, std::memory_order_relaxed);
  }
  if (window_.fetch_add(1, std::memory_order_relaxed) + 1 < kWindow) return;
  window_.store(0, std::memory_order_relaxed);
  const uint32_t late = window_late_.exchange(0, std::memory_order_relaxed);
  const uint32_t over_share =
      window_over_share_.exchange(0, std::memory_order_relaxed);
  if (late > kLateInWindow || over_share > kWindow / 2) {
    Rest();
  } else if (late == 0) {
    rest_ns_.store(
        std::max(kRestNs, rest_ns_.load(std::memory_order_relaxed) / 2),
        std::memory_order_relaxed);
  }
}

bool Health::RestEnds(uint64_t now, uint64_t until, uint32_t cpus) {
  std::unique_lock lock(rest_ends_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return true;  // another caller decides
  if (rest_until_.load(std::memory_order_relaxed) != until) {
    return InRest();  // decided meanwhile
  }
  const uint64_t began = rest_began_.load(std::memory_order_relaxed);
  const uint64_t began_cpu = rest_began_cpu_.load(std::memory_order_relaxed);
  const uint64_t used = ProcessCpuNanos();
  if (began < now && now - began >= kJudgedRestNs && began_cpu != 0 &&
      used >= began_cpu) {
    const uint64_t available = (now - began) * cpus;
    if (used - began_cpu < available - available / kOtherWorkShare) {
      rest_began_.store(now, std::memory_order_relaxed);
      rest_began_cpu_.store(used, std::memory_order_relaxed);
      rest_until_.store(now + (until - began), std::memory_order_relaxed);
      return true;
    }
  }
  rest_until_.store(0, std::memory_order_relaxed);
  return false;
}

void Health::Rest() {
  vain_.store(0, std::memory_order_relaxed);
  window_.store(0, std::memory_order_relaxed);
  window_late_.store(0, std::memory_order_relaxed);
  window_over_share_.store(0, std::memory_order_relaxed);
  grace_.store(kGrace, std::memory_order_relaxed);
  const uint64_t rest = rest_ns_.load(std::memory_order_relaxed);
  const uint64_t now = internal::NowNanos();
  rest_began_cpu_.store(ProcessCpuNanos(), std::memory_order_relaxed);
  rest_began_.store(now, std::memory_order_relaxed);
  rest_until_.store(now + rest, std::memory_order_relaxed);
  rest_ns_.store(std::min(2 * rest, kMaxRestNs), std::memory_order_relaxed);
}

Ran Combiner::Encrypt(const kernels::Tier &tier, const CbcRequest &request) {
  // One shard per CPU, each request in the shard of the CPU its thread
  // runs on: the threads that batch together share a CPU, so that while
  // one combines the others' turns come on that CPU, and every CPU forms
  // and runs batches of its own (waking a thread on another CPU costs an
  // interrupt, in a VM tens of microseconds).
  if (Lease *lease = ThisThreadLease()) {
    const size_t index = ShardOfThisCpu();
    if (lease->shard != index) {
      if (lease->shard < num_shards_) shards_[lease->shard].Leave();
      shards_[index].Join();
      lease->shard = index;
    }
    if (SlotIn(*lease, index) != nullptr) {
      internal::Verdict verdict;
      // Run() drops the lease's slot if it withdraws the request.
      const Ran ran = shards_[index].Run(
          tier, request, lease->slots[index],
          callers_.load(std::memory_order_relaxed), usable_cpus_, &verdict);
      HealthFor(health_, request.len).Count(verdict);
      return ran;
    }
  }
  RunAlone(tier, request);
  return Ran::kAlone;
}

namespace {

// Made on first use; freed by ReleaseIdleCombiner(), never at exit, when
// other threads may still be inside it. Made and replaced without a lock,
// which a forked child could inherit held; freed under core::InitLock,
// which fork() waits for.
std::atomic<Combiner *> g_combiner{nullptr};

// Installs `fresh` (null: no memory for it) in place of `expected`;
// returns the combiner in place, null if there is none.
Combiner *Install(Combiner *expected, Combiner *fresh) {
  if (fresh == nullptr) {
    Combiner *current = g_combiner.load(std::memory_order_acquire);
    return current != expected ? current : nullptr;
  }
  if (g_combiner.compare_exchange_strong(expected, fresh,
                                         std::memory_order_acq_rel)) {
    return fresh;
  }
  delete fresh;  // another thread installed one first
  return expected;
}

// The process's combiner, made or (in a forked child) replaced on first
// use; null if there is no memory for it.
[[gnu::noinline]] Combiner *MakeCombiner(Combiner *inherited) {
  if (inherited == nullptr) return Install(nullptr, Combiner::Create());
  Combiner *current = g_combiner.load(std::memory_order_acquire);
  if (current != inherited) return current;
  return Install(inherited, Combiner::Create(inherited));
}

Combiner *TheCombiner() {
  Combiner *combiner = g_combiner.load(std::memory_order_acquire);
  if (combiner != nullptr && !combiner->Stale()) [[likely]] {
    return combiner;
  }
  combiner = MakeCombiner(combiner);
  return combiner != nullptr && !combiner->Stale() ? combiner : nullptr;
}

}  // namespace

uint32_t CallerProbe::OtherThreads() {
  combiner_ = TheCombiner();
  others_ = combiner_ != nullptr ? combiner_->Enter() : 0;
  return others_;
}

bool CallerProbe::ThreadsRest(uint64_t len) const {
  return combiner_ != nullptr && combiner_->Resting(len);
}

void Prepare() { (void)core::UsableCpus(); }

void ReleaseIdleCombiner() {
  core::InitLock lock;
  Combiner *combiner = g_combiner.load(std::memory_order_acquire);
  if (combiner == nullptr || !combiner->Idle()) return;
  g_combiner.store(nullptr, std::memory_order_release);
  delete combiner;
}

Ran EncryptCbc(const kernels::Tier &tier, const CbcRequest &request,
               const CallerProbe &caller) {
  if (ASYNC_JOB *job = caller.job()) {
    return internal::EncryptInJob(job, tier, request);
  }
  Combiner *combiner = caller.combiner_;
  Ran ran = Ran::kAlone;
  if (combiner != nullptr && caller.batches_) {
    ran = combiner->Encrypt(tier, request);
  } else if (combiner != nullptr && caller.others_ >= core::UsableCpus() &&
             SoloTime::WantSample(/*resting=*/true)) {
    // Batching rests: the solo time is learnt from these requests
    // meanwhile, for the latency budget when it runs again.
    SoloTime::RunAndLearn(tier, request, /*resting=*/true);
  } else {
    RunAlone(tier, request);
  }
  if (combiner != nullptr) combiner->Leave();
  return ran;
}

}  // namespace aesmux::batch
