// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The wait fd of an OpenSSL ASYNC job: how a path that pauses a job tells
// the application's scheduler (SSL_get_all_async_fds, openssl speed
// -async_jobs) what to poll before resuming it. Used by the paths that
// batch the requests of paused jobs: the afalg path's rings and the
// multi-buffer batching.
#ifndef AESMUX_PROVIDER_CORE_ASYNC_WAIT_H_
#define AESMUX_PROVIDER_CORE_ASYNC_WAIT_H_

#include <openssl/async.h>

namespace aesmux::core {

// Registers `fd` in `job`'s wait context under `key` (the address of a
// caller's own object: one key per kind of fd). A different fd registered
// there under the same key before (a parent's after a fork, a ring that was
// replaced) is cleared first; the same fd is left as it is. Returns false,
// with nothing registered, when the job has no wait context or OpenSSL
// refuses; the caller then does not pause the job.
bool SetJobWaitFd(ASYNC_JOB *job, const void *key, int fd);

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_ASYNC_WAIT_H_
