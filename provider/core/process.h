// Which process this is, without a syscall: the fork generation.
//
// State that belongs to one process (the thread combiner's shards, the
// threads' lane managers and ASYNC wait fd, io_uring rings, AF_ALG
// sockets) records the generation it was made in. A forked child has only
// the thread that called fork(); whatever the others left there (a
// combiner held, requests published or queued, a ring mid-submission)
// belongs to threads that do not exist in it. The child recognises it by
// the generation and makes its own, never using, running or closing the
// parent's.
//
// A fork handler (pthread_atfork, registered on first use) bumps the
// generation in the child: one integer store, no syscall (a child may be
// about to enter a seccomp sandbox) and nothing unsafe after fork. glibc
// drops the handler when aesmux.so is unloaded (dlclose unregisters the
// module's fork handlers; tests/provider/fork_test.cc forks after an
// unload), so it never calls into an unmapped module.
#ifndef AESMUX_PROVIDER_CORE_PROCESS_H_
#define AESMUX_PROVIDER_CORE_PROCESS_H_

#include <cstdint>

namespace aesmux::core {

// Starts at 1 and grows by one in each forked child. Reading it registers
// the fork handler, so anything that records a generation is recognised
// in a child forked after that.
uint64_t ProcessGeneration();

// Held while a process-wide object is made or replaced on first use (the
// fallback library, a wait fd, the afalg probe): one lock for all of them,
// held briefly and never around anything that takes it again. fork() waits
// until no thread holds it, so that a child never inherits it held, or an
// object half made, by a thread it does not have.
class InitLock {
 public:
  InitLock();
  ~InitLock();
  InitLock(const InitLock &) = delete;
  InitLock &operator=(const InitLock &) = delete;
};

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_PROCESS_H_
