#include "provider/route/stats.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>

namespace aesmux::route {
namespace {

// One thread's counters. Only the owning thread writes them (relaxed
// load+store, no locked instruction); readers load them relaxed.
struct ThreadCounters {
  std::array<std::array<std::atomic<uint64_t>, kNumPaths>, kNumAlgs> requests{};
  std::array<std::array<std::atomic<uint64_t>, kNumPaths>, kNumAlgs> bytes{};
  std::array<std::array<std::atomic<uint64_t>, kNumHandoffs>, kNumAlgs>
      handoff_requests{};
  std::array<std::array<std::atomic<uint64_t>, kNumHandoffs>, kNumAlgs>
      handoff_bytes{};
  ThreadCounters *next = nullptr;
};

struct Registry {
  std::mutex mutex;
  ThreadCounters *live = nullptr;  // guarded by mutex
  StatsSnapshot retired;           // guarded by mutex: exited threads
};

// Intentionally never destroyed: threads may exit after static destructors.
Registry &TheRegistry();

class ThreadSlot {
 public:
  ThreadCounters *get() {
    if (counters_ == nullptr) counters_ = Register();
    return counters_;
  }
  ThreadCounters *peek() const { return counters_; }
  void Forget() { counters_ = nullptr; }
  ~ThreadSlot() {
    if (counters_ != nullptr) Retire(counters_);
  }

 private:
  static ThreadCounters *Register();
  static void Retire(ThreadCounters *counters);
  ThreadCounters *counters_ = nullptr;
};

thread_local ThreadSlot t_slot;

void AddInto(StatsSnapshot &sum, const ThreadCounters &counters) {
  for (size_t a = 0; a < kNumAlgs; ++a) {
    for (size_t p = 0; p < kNumPaths; ++p) {
      sum.counters[a][p].requests +=
          counters.requests[a][p].load(std::memory_order_relaxed);
      sum.counters[a][p].bytes +=
          counters.bytes[a][p].load(std::memory_order_relaxed);
    }
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      sum.handoffs[a][h].requests +=
          counters.handoff_requests[a][h].load(std::memory_order_relaxed);
      sum.handoffs[a][h].bytes +=
          counters.handoff_bytes[a][h].load(std::memory_order_relaxed);
    }
  }
}

void ZeroCounters(ThreadCounters &counters) {
  for (size_t a = 0; a < kNumAlgs; ++a) {
    for (size_t p = 0; p < kNumPaths; ++p) {
      counters.requests[a][p].store(0, std::memory_order_relaxed);
      counters.bytes[a][p].store(0, std::memory_order_relaxed);
    }
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      counters.handoff_requests[a][h].store(0, std::memory_order_relaxed);
      counters.handoff_bytes[a][h].store(0, std::memory_order_relaxed);
    }
  }
}

// fork(): hold the registry lock across it so the child never inherits it
// locked; in the child, drop the other threads' counters (those threads do
// not exist there) and start from zero.
void BeforeFork() { TheRegistry().mutex.lock(); }
void AfterForkInParent() { TheRegistry().mutex.unlock(); }
void AfterForkInChild() {
  Registry &registry = TheRegistry();
  ThreadCounters *mine = t_slot.peek();
  for (ThreadCounters *node = registry.live; node != nullptr;) {
    ThreadCounters *next = node->next;
    if (node != mine) delete node;
    node = next;
  }
  registry.live = mine;
  if (mine != nullptr) {
    mine->next = nullptr;
    ZeroCounters(*mine);
  }
  registry.retired = StatsSnapshot{};
  registry.mutex.unlock();
}

Registry &TheRegistry() {
  static Registry *registry = [] {
    auto *created = new Registry;
    pthread_atfork(BeforeFork, AfterForkInParent, AfterForkInChild);
    return created;
  }();
  return *registry;
}

ThreadCounters *ThreadSlot::Register() {
  auto *counters = new ThreadCounters;
  Registry &registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  counters->next = registry.live;
  registry.live = counters;
  return counters;
}

void ThreadSlot::Retire(ThreadCounters *counters) {
  Registry &registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  AddInto(registry.retired, *counters);
  for (ThreadCounters **link = &registry.live; *link != nullptr;
       link = &(*link)->next) {
    if (*link == counters) {
      *link = counters->next;
      break;
    }
  }
  delete counters;
}

void Bump(std::atomic<uint64_t> &counter, uint64_t amount) {
  counter.store(counter.load(std::memory_order_relaxed) + amount,
                std::memory_order_relaxed);
}

}  // namespace

void CountRequest(Alg alg, Path path, uint64_t bytes) {
  ThreadCounters *counters = t_slot.get();
  const auto a = static_cast<size_t>(alg);
  const auto p = static_cast<size_t>(path);
  Bump(counters->requests[a][p], 1);
  Bump(counters->bytes[a][p], bytes);
}

void CountHandoff(Alg alg, Handoff handoff, uint64_t bytes) {
  ThreadCounters *counters = t_slot.get();
  const auto a = static_cast<size_t>(alg);
  const auto h = static_cast<size_t>(handoff);
  Bump(counters->handoff_requests[a][h], 1);
  Bump(counters->handoff_bytes[a][h], bytes);
}

std::string HandoffStatName(Handoff handoff) {
  return "afalg-fallback:" + std::string(HandoffName(handoff));
}

StatsSnapshot ReadStats() {
  Registry &registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  StatsSnapshot sum = registry.retired;
  for (const ThreadCounters *node = registry.live; node != nullptr;
       node = node->next) {
    AddInto(sum, *node);
  }
  return sum;
}

std::string FormatStats(const StatsSnapshot &snapshot) {
  std::string out;
  for (const AlgInfo &info : kAlgs) {
    for (size_t p = 0; p < kNumPaths; ++p) {
      const Counter &counter = snapshot.at(info.alg, static_cast<Path>(p));
      char line[128];
      std::snprintf(line, sizeof(line), "%s %s %llu %llu\n",
                    std::string(info.name).c_str(),
                    std::string(kPathNames[p]).c_str(),
                    static_cast<unsigned long long>(counter.requests),
                    static_cast<unsigned long long>(counter.bytes));
      out += line;
    }
  }
  for (const AlgInfo &info : kAlgs) {
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      const Counter &counter = snapshot.at(info.alg, static_cast<Handoff>(h));
      if (counter.requests == 0) continue;
      char line[160];
      std::snprintf(line, sizeof(line), "%s %s %llu %llu\n",
                    std::string(info.name).c_str(),
                    HandoffStatName(static_cast<Handoff>(h)).c_str(),
                    static_cast<unsigned long long>(counter.requests),
                    static_cast<unsigned long long>(counter.bytes));
      out += line;
    }
  }
  return out;
}

int WriteStatsFile(const std::string &prefix, const std::string &notes) {
  const std::string path = prefix + "." + std::to_string(getpid());
  const std::string temporary = path + ".tmp";
  const std::string text = FormatStats(ReadStats()) + notes;

  const int fd = open(temporary.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -errno;
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = -errno;
      close(fd);
      unlink(temporary.c_str());
      return error;
    }
    written += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = -errno;
    unlink(temporary.c_str());
    return error;
  }
  return 0;
}

}  // namespace aesmux::route
