// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/core/thread_exit.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <mutex>

#include "provider/core/process.h"

namespace aesmux::core {

namespace thread_exit_internal {
thread_local constinit Record t_record = {};
}  // namespace thread_exit_internal

namespace {

using thread_exit_internal::t_record;

constinit std::atomic<ThreadCleanup> g_cleanups[kNumThreadSlots] = {};

// The key and whether the module is pinned; made under InitLock.
struct Key {
  std::atomic<bool> ready{false};
  pthread_key_t key{};
};
constinit Key g_key;

// Runs the exiting thread's cleanups. Each may set a slot again (a ring's
// release may count statistics): glibc then calls this again, up to
// PTHREAD_DESTRUCTOR_ITERATIONS times in all.
void ReleaseThreadObjects(void *) {
  for (size_t slot = 0; slot < kNumThreadSlots; ++slot) {
    void *object = t_record.objects[slot];
    if (object == nullptr) continue;
    t_record.objects[slot] = nullptr;
    g_cleanups[slot].load(std::memory_order_relaxed)(object);
  }
}

// aesmux.so stays loaded for the rest of the process (the header says why);
// a program linked with aesmux's layers (the tests) is never unloaded.
bool PinModule() {
  Dl_info info{};
  void *object = nullptr;  // the link map of the object holding this code
  if (dladdr1(reinterpret_cast<void *>(&ReleaseThreadObjects), &info, &object,
              RTLD_DL_LINKMAP) == 0 ||
      info.dli_fname == nullptr) {
    return false;
  }
  void *program = dlopen(nullptr, RTLD_NOW);  // glibc: the program's link map
  if (program != nullptr) dlclose(program);
  if (object == program) return true;
  void *self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  if (self == nullptr) return false;
  dlclose(self);  // the flag stays; the reference taken here goes
  return true;
}

bool MakeKey() {
  if (g_key.ready.load(std::memory_order_acquire)) return true;
  InitLock lock;
  if (g_key.ready.load(std::memory_order_relaxed)) return true;
  if (!PinModule()) return false;
  if (pthread_key_create(&g_key.key, ReleaseThreadObjects) != 0) return false;
  g_key.ready.store(true, std::memory_order_release);
  return true;
}

}  // namespace

bool SetThreadObject(ThreadSlot slot, void *object, ThreadCleanup cleanup) {
  g_cleanups[static_cast<size_t>(slot)].store(cleanup,
                                               std::memory_order_relaxed);
  // The key's value is the record: glibc calls the destructor only for a
  // value that is not null. Set again for every slot: a cleanup run at
  // exit may have set a slot after glibc cleared the value.
  if (!MakeKey() || pthread_setspecific(g_key.key, &t_record) != 0) {
    return false;
  }
  t_record.objects[static_cast<size_t>(slot)] = object;
  return true;
}

}  // namespace aesmux::core
