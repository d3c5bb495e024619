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

pthread_mutex_t g_init = PTHREAD_MUTEX_INITIALIZER;
constinit std::once_flag g_init_fork_handlers;

}  // namespace

InitLock::InitLock() {
  std::call_once(g_init_fork_handlers, [] {
    pthread_atfork([] { pthread_mutex_lock(&g_init); },
                   [] { pthread_mutex_unlock(&g_init); },
                   [] { pthread_mutex_unlock(&g_init); });
  });
  pthread_mutex_lock(&g_init);
}

InitLock::~InitLock() { pthread_mutex_unlock(&g_init); }

uint64_t ProcessGeneration() {
  if (!g_watching.load(std::memory_order_acquire)) WatchForks();
  return g_generation.load(std::memory_order_relaxed);
}

}  // namespace aesmux::core
