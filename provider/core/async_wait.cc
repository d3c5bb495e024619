// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/core/async_wait.h"

namespace aesmux::core {

bool SetJobWaitFd(ASYNC_JOB *job, const void *key, int fd) {
  ASYNC_WAIT_CTX *wait_ctx = ASYNC_get_wait_ctx(job);
  if (wait_ctx == nullptr) return false;
  OSSL_ASYNC_FD registered = -1;
  void *custom = nullptr;
  if (ASYNC_WAIT_CTX_get_fd(wait_ctx, key, &registered, &custom)) {
    if (registered == fd) return true;
    ASYNC_WAIT_CTX_clear_fd(wait_ctx, key);
  }
  return ASYNC_WAIT_CTX_set_wait_fd(wait_ctx, key, fd, nullptr, nullptr) == 1;
}

}  // namespace aesmux::core
