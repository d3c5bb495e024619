#include "provider/core/process.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace aesmux::core {
namespace {

constinit std::atomic<uint64_t> g_generation{1};
constinit std::atomic<bool> g_watching{false};
constinit std::once_flag g_fork_handler;

void AfterForkInChild() {
  g_generation.fetch_add(1, std::memory_order_relaxed);
}

[[gnu::noinline]] void WatchForks() {
  std::call_once(g_fork_handler,
                 [] { pthread_atfork(nullptr, nullptr, AfterForkInChild); });
  g_watching.store(true, std::memory_order_release);
}

}  // namespace

uint64_t ProcessGeneration() {
  if (!g_watching.load(std::memory_order_acquire)) WatchForks();
  return g_generation.load(std::memory_order_relaxed);
}

}  // namespace aesmux::core
