// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Per-thread objects released when their thread exits, without C++
// thread_local destructors.
//
// A thread_local with a destructor registers it with glibc when the
// thread first touches it (__cxa_thread_atexit_impl), which allocates and,
// when memory has run out, aborts the process ("failed to register TLS
// destructor: out of memory"). So aesmux's per-thread objects (a thread's
// statistics counters, io_uring ring, lane queue and combiner lease) hang
// from a slot of a trivially destructible thread_local record instead, and
// one pthread key per process (made when a thread first sets a slot) runs
// their cleanups when the thread exits, in slot order. Setting a slot can
// fail (pthread_setspecific may allocate; a process may have no key left):
// the caller then keeps no per-thread object and does without.
//
// glibc keeps a module loaded while its thread_local destructors are
// pending; a pthread key's destructor has no such hold. So the first slot
// set in the process makes aesmux.so stay loaded (RTLD_NODELETE) for the
// rest of the process, as the ENGINE module always does: a thread may
// exit after the last OSSL_PROVIDER_unload. The provider is still torn
// down then; only its code stays mapped.
//
// pthread keys run no destructor for the thread that calls exit(): its
// objects stay where they are (reachable, its statistics counted) until
// the process ends. A forked child keeps its thread's slots.
#ifndef AESMUX_PROVIDER_CORE_THREAD_EXIT_H_
#define AESMUX_PROVIDER_CORE_THREAD_EXIT_H_

#include <cstddef>
#include <cstdint>

namespace aesmux::core {

// Released in this order: the statistics last, since the others may count.
enum class ThreadSlot : uint8_t { kCombinerLease, kLaneQueue, kRing, kStats };
inline constexpr size_t kNumThreadSlots = 4;

using ThreadCleanup = void (*)(void *object);

namespace thread_exit_internal {
struct Record {
  void *objects[kNumThreadSlots];
};
extern thread_local constinit Record t_record;
}  // namespace thread_exit_internal

// This thread's object in `slot`, or null.
inline void *ThreadObject(ThreadSlot slot) {
  return thread_exit_internal::t_record.objects[static_cast<size_t>(slot)];
}

// Makes `object` (not null) this thread's in `slot`, to be released by
// `cleanup` (the same function for every call with `slot`) when the
// thread exits; the slot must be empty (ClearThreadObject). False, and
// the slot left empty, if the thread's exit cannot be watched: the caller
// keeps no per-thread object.
bool SetThreadObject(ThreadSlot slot, void *object, ThreadCleanup cleanup);

// Empties `slot` without its cleanup: the caller has released the object
// or handed it on.
inline void ClearThreadObject(ThreadSlot slot) {
  thread_exit_internal::t_record.objects[static_cast<size_t>(slot)] = nullptr;
}

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_THREAD_EXIT_H_
