#include "provider/batch/cbc_batch.h"

#include <openssl/async.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "provider/route/stats.h"

namespace aesmux::batch {
namespace {

using kernels::mb::CbcJob;
using kernels::mb::CbcLaneManager;
using kernels::mb::MbTier;

// An AES key of 10, 12 or 14 rounds: the lane manager for that key size,
// and the statistics' algorithm.
size_t KeySizeIndex(uint32_t rounds) { return (rounds - 10) / 2; }
constexpr route::Alg kCbcAlgs[] = {route::Alg::kAes128Cbc,
                                   route::Alg::kAes192Cbc,
                                   route::Alg::kAes256Cbc};

void RunAlone(const kernels::Tier &single, const CbcRequest &request) {
  single.ops.cbc_encrypt(request.key, request.iv, request.out, request.in,
                         request.len);
  route::CountRequest(request.alg, route::Path::kSimd, request.len);
}

// Lane managers, one per multi-buffer tier and key size, created on first
// use. Owned by one thread at a time (the async state's thread, or the
// combiner's holder).
class Managers {
 public:
  CbcLaneManager &For(const MbTier &tier, uint32_t rounds) {
    const size_t t = static_cast<size_t>(&tier - kernels::mb::kMbTiers.data());
    const size_t k = KeySizeIndex(rounds);
    std::unique_ptr<CbcLaneManager> &manager = managers_[t][k];
    if (manager == nullptr) {
      manager = std::make_unique<CbcLaneManager>(tier, rounds);
    }
    return *manager;
  }

  // Counts the kernel calls made since the last report (batches and the
  // lanes they filled) for each key size.
  void ReportBatches() {
    for (auto &row : managers_) {
      for (size_t k = 0; k < row.size(); ++k) {
        if (row[k] == nullptr) continue;
        Reported &last = reported_[&row - managers_.data()][k];
        const uint64_t calls = row[k]->kernel_calls();
        const uint64_t lanes = row[k]->lanes_filled();
        if (calls == last.calls) continue;
        route::CountBatches(kCbcAlgs[k], calls - last.calls,
                            lanes - last.lanes);
        last = {calls, lanes};
      }
    }
  }

 private:
  struct Reported {
    uint64_t calls = 0;
    uint64_t lanes = 0;
  };
  static constexpr size_t kTiers = kernels::mb::kMbTiers.size();
  std::array<std::array<std::unique_ptr<CbcLaneManager>, 3>, kTiers> managers_;
  std::array<std::array<Reported, 3>, kTiers> reported_{};
};

// Pops every job the manager has completed in order; their owners see
// `done` when they look.
void Drain(CbcLaneManager &manager) {
  while (manager.GetCompleted() != nullptr) {
  }
}

// ---------------------------------------------------------------------------
// ASYNC jobs
// ---------------------------------------------------------------------------

// The wait fd every paused job registers: an eventfd made readable once and
// never read, so the application's scheduler resumes the job at its next
// round. One per process (re-created in a forked child), made on the first
// request inside an async job.
int WaitFd() {
  static std::mutex mutex;
  static int fd = -1;
  static pid_t owner = 0;
  std::lock_guard lock(mutex);
  if (fd >= 0 && owner == getpid()) return fd;
  fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
  owner = getpid();
  return fd;
}

const char kWaitFdKey = 0;  // its address tags our fd in ASYNC_WAIT_CTX

bool RegisterWaitFd(ASYNC_JOB *job) {
  ASYNC_WAIT_CTX *wait_ctx = ASYNC_get_wait_ctx(job);
  if (wait_ctx == nullptr) return false;
  OSSL_ASYNC_FD registered;
  void *data;
  if (ASYNC_WAIT_CTX_get_fd(wait_ctx, &kWaitFdKey, &registered, &data)) {
    return true;
  }
  const int fd = WaitFd();
  return fd >= 0 &&
         ASYNC_WAIT_CTX_set_wait_fd(wait_ctx, &kWaitFdKey, fd, nullptr,
                                    nullptr) == 1;
}

// After this many flushes in a row that found only the flusher's own
// request, run the next kSkip requests at once; then probe again. A single
// async job (speed -async_jobs 1) thus pauses for one request in kSkip + 1.
constexpr int kLonelyFlushes = 4;
constexpr int kSkip = 63;

struct AsyncState {
  Managers managers;
  int lonely_flushes = 0;
  int skip_left = 0;
};

AsyncState &ThisThreadAsync() {
  thread_local std::unique_ptr<AsyncState> state;
  if (state == nullptr) state = std::make_unique<AsyncState>();
  return *state;
}

void EncryptInJob(ASYNC_JOB *job, const MbTier &tier,
                  const kernels::Tier &single, const CbcRequest &request) {
  AsyncState &state = ThisThreadAsync();
  if (state.skip_left > 0) {
    --state.skip_left;
    RunAlone(single, request);
    return;
  }
  if (!RegisterWaitFd(job)) {
    RunAlone(single, request);
    return;
  }
  CbcLaneManager &manager = state.managers.For(tier, request.key->rounds);
  // Small, and on the job's 32 KiB stack only until this request is done.
  CbcJob lane_job{request.key, request.iv, request.out, request.in,
                  request.len};
  manager.Submit(&lane_job);
  Drain(manager);

  // Let the other jobs queue their requests.
  ASYNC_pause_job();

  if (!lane_job.done) {
    // Complete this request, and with it everything queued meanwhile.
    const size_t batch = manager.pending();
    while (!lane_job.done && manager.Flush() != nullptr) {
    }
    Drain(manager);
    state.managers.ReportBatches();
    if (batch > 1) {
      state.lonely_flushes = 0;
    } else if (++state.lonely_flushes >= kLonelyFlushes) {
      state.lonely_flushes = 0;
      state.skip_left = kSkip;
    }
  }
  route::CountRequest(request.alg, route::Path::kMb, request.len);
}

// ---------------------------------------------------------------------------
// Synchronous callers on several threads: flat combining
// ---------------------------------------------------------------------------

// A thread's publication slot. States:
enum SlotState : uint32_t {
  kIdle,       // nothing published
  kPublished,  // a request waits for a combiner
  kTaken,      // a combiner has it
  kDone,       // served
  kWake,       // the combiner left: try to become the combiner
};

struct Slot {
  std::atomic<uint32_t> state{kIdle};
  const CbcRequest *request = nullptr;
  std::atomic<bool> in_use{true};
  Slot *next = nullptr;  // immutable once linked
};

class Combiner {
 public:
  Combiner() = default;
  Combiner(const Combiner &) = delete;
  Combiner &operator=(const Combiner &) = delete;
  ~Combiner();

  // No thread combines now and none holds a slot.
  bool Idle() const;

  void Encrypt(const MbTier &tier, const kernels::Tier &single,
               const CbcRequest &request);

 private:
  Slot &ThisThreadSlot();
  void Combine(const MbTier &tier, const kernels::Tier &single, Slot &mine);

  std::atomic_flag busy_ = ATOMIC_FLAG_INIT;
  std::atomic<Slot *> slots_{nullptr};  // grows only; slots are reused
  // Owned by the thread holding `busy_`.
  Managers managers_;
  std::vector<Slot *> batch_;
  std::vector<CbcJob> jobs_;
};

// Frees this thread's slot for reuse when the thread exits.
struct SlotLease {
  Slot *slot = nullptr;
  ~SlotLease() {
    if (slot != nullptr) slot->in_use.store(false, std::memory_order_release);
  }
};

Combiner::~Combiner() {
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;) {
    Slot *next = slot->next;
    delete slot;
    slot = next;
  }
}

bool Combiner::Idle() const {
  if (busy_.test(std::memory_order_acquire)) return false;
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;
       slot = slot->next) {
    if (slot->in_use.load(std::memory_order_acquire)) return false;
  }
  return true;
}

Slot &Combiner::ThisThreadSlot() {
  thread_local SlotLease lease;
  if (lease.slot != nullptr) return *lease.slot;
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;
       slot = slot->next) {
    bool free = false;
    if (slot->in_use.compare_exchange_strong(free, true)) {
      lease.slot = slot;
      return *slot;
    }
  }
  auto *slot = new Slot;  // lives as long as the combiner: others scan it
  slot->next = slots_.load(std::memory_order_relaxed);
  while (!slots_.compare_exchange_weak(slot->next, slot,
                                       std::memory_order_release,
                                       std::memory_order_relaxed)) {
  }
  lease.slot = slot;
  return *slot;
}

void Combiner::Encrypt(const MbTier &tier, const kernels::Tier &single,
                       const CbcRequest &request) {
  Slot &mine = ThisThreadSlot();
  mine.request = &request;
  mine.state.store(kPublished, std::memory_order_release);
  for (;;) {
    if (!busy_.test_and_set(std::memory_order_acquire)) {
      Combine(tier, single, mine);
      return;
    }
    // Someone is combining: sleep until served, or asked to take over.
    mine.state.wait(kPublished, std::memory_order_acquire);
    uint32_t state = mine.state.load(std::memory_order_acquire);
    while (state == kTaken) {
      mine.state.wait(kTaken, std::memory_order_acquire);
      state = mine.state.load(std::memory_order_acquire);
    }
    if (state == kDone) {
      mine.state.store(kIdle, std::memory_order_relaxed);
      return;
    }
    // kWake: the combiner left with our request still published.
    mine.state.store(kPublished, std::memory_order_relaxed);
  }
}

void Combiner::Combine(const MbTier &tier, const kernels::Tier &single,
                       Slot &mine) {
  // Our own request first, whatever a departing combiner did to our slot
  // (it may have just marked it kWake); then every other request
  // published now.
  mine.state.store(kTaken, std::memory_order_relaxed);
  batch_.clear();
  batch_.push_back(&mine);
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;
       slot = slot->next) {
    uint32_t published = kPublished;
    if (slot != &mine &&
        slot->state.compare_exchange_strong(published, kTaken,
                                            std::memory_order_acq_rel)) {
      batch_.push_back(slot);
    }
  }
  if (batch_.size() == 1) {
    RunAlone(single, *mine.request);
  } else {
    jobs_.clear();
    jobs_.reserve(batch_.size());
    for (Slot *slot : batch_) {
      const CbcRequest &r = *slot->request;
      jobs_.push_back(CbcJob{r.key, r.iv, r.out, r.in, r.len});
    }
    for (CbcJob &job : jobs_) {
      CbcLaneManager &manager = managers_.For(tier, job.key->rounds);
      manager.Submit(&job);
      Drain(manager);
    }
    for (CbcJob &job : jobs_) {
      CbcLaneManager &manager = managers_.For(tier, job.key->rounds);
      while (!job.done && manager.Flush() != nullptr) {
      }
      Drain(manager);
    }
    managers_.ReportBatches();
    for (Slot *slot : batch_) {
      route::CountRequest(slot->request->alg, route::Path::kMb,
                          slot->request->len);
    }
  }
  // Hand results back, then leave, then wake one request that arrived
  // meanwhile so that it takes over.
  for (Slot *slot : batch_) {
    if (slot == &mine) continue;
    slot->state.store(kDone, std::memory_order_release);
    slot->state.notify_one();
  }
  mine.state.store(kIdle, std::memory_order_relaxed);
  busy_.clear(std::memory_order_release);
  for (Slot *slot = slots_.load(std::memory_order_acquire); slot != nullptr;
       slot = slot->next) {
    uint32_t published = kPublished;
    if (slot->state.compare_exchange_strong(published, kWake,
                                            std::memory_order_acq_rel)) {
      slot->state.notify_one();
      break;
    }
  }
}

// Made on first use; freed by ReleaseIdleCombiner(), never at exit, when
// other threads may still be inside it.
std::mutex g_combiner_mutex;
std::atomic<Combiner *> g_combiner{nullptr};

Combiner &TheCombiner() {
  Combiner *combiner = g_combiner.load(std::memory_order_acquire);
  if (combiner != nullptr) return *combiner;
  std::lock_guard lock(g_combiner_mutex);
  combiner = g_combiner.load(std::memory_order_relaxed);
  if (combiner == nullptr) {
    combiner = new Combiner;
    g_combiner.store(combiner, std::memory_order_release);
  }
  return *combiner;
}

}  // namespace

void ReleaseIdleCombiner() {
  std::lock_guard lock(g_combiner_mutex);
  Combiner *combiner = g_combiner.load(std::memory_order_acquire);
  if (combiner == nullptr || !combiner->Idle()) return;
  g_combiner.store(nullptr, std::memory_order_release);
  delete combiner;
}

void EncryptCbcStreams(const MbTier &lanes,
                       std::span<const CbcRequest> requests) {
  Managers &managers = ThisThreadAsync().managers;
  CbcJob jobs[32];
  const size_t count = std::min(requests.size(), std::size(jobs));
  for (size_t i = 0; i < count; ++i) {
    const CbcRequest &r = requests[i];
    jobs[i] = CbcJob{r.key, r.iv, r.out, r.in, r.len};
    CbcLaneManager &manager = managers.For(lanes, r.key->rounds);
    manager.Submit(&jobs[i]);
    Drain(manager);
  }
  for (size_t i = 0; i < count; ++i) {
    CbcLaneManager &manager = managers.For(lanes, jobs[i].key->rounds);
    while (!jobs[i].done && manager.Flush() != nullptr) {
    }
    Drain(manager);
  }
  managers.ReportBatches();
  for (size_t i = 0; i < count; ++i) {
    route::CountRequest(requests[i].alg, route::Path::kMb, requests[i].len);
  }
}

void EncryptCbc(const MbTier &lanes, const kernels::Tier &single,
                const CbcRequest &request) {
  if (ASYNC_JOB *job = ASYNC_get_current_job()) {
    EncryptInJob(job, lanes, single, request);
  } else {
    TheCombiner().Encrypt(lanes, single, request);
  }
}

}  // namespace aesmux::batch
