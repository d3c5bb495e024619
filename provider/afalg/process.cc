#include "provider/afalg/process.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace aesmux::afalg {
namespace {

std::atomic<uint64_t> g_generation{1};
// The generation that is armed, or 0.
std::atomic<uint64_t> g_armed_generation{0};
std::atomic<bool> g_fork_rebuild{false};

void AfterForkInChild() {
  const uint64_t parent = g_generation.load(std::memory_order_relaxed);
  const bool parent_armed =
      g_armed_generation.load(std::memory_order_relaxed) == parent;
  g_generation.store(parent + 1, std::memory_order_relaxed);
  g_armed_generation.store(
      parent_armed && g_fork_rebuild.load(std::memory_order_relaxed)
          ? parent + 1
          : 0,
      std::memory_order_relaxed);
}

void RegisterForkHandler() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, AfterForkInChild); });
}

}  // namespace

uint64_t ProcessGeneration() {
  return g_generation.load(std::memory_order_relaxed);
}

bool Armed() {
  return g_armed_generation.load(std::memory_order_relaxed) ==
         g_generation.load(std::memory_order_relaxed);
}

void Arm() {
  RegisterForkHandler();
  g_armed_generation.store(g_generation.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
}

void SetForkRebuild(bool rebuild) {
  RegisterForkHandler();
  if (rebuild) g_fork_rebuild.store(true, std::memory_order_relaxed);
}

}  // namespace aesmux::afalg
