// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/support/async_update.h"

#include <mutex>
#include <utility>
#include <vector>

namespace aesmux::test {
namespace {

std::mutex g_abandoned_mutex;
// Never destroyed: LeakSanitizer looks after static destructors have run.
auto *const g_abandoned =
    new std::vector<std::pair<ASYNC_JOB *, ASYNC_WAIT_CTX *>>;

}  // namespace

void KeepAbandoned(ASYNC_JOB *job, ASYNC_WAIT_CTX *wait) {
  std::lock_guard lock(g_abandoned_mutex);
  g_abandoned->emplace_back(job, wait);
}

AsyncUpdate::AsyncUpdate(const EVP_CIPHER *cipher, std::mt19937_64 &rng,
                         size_t len)
    : key(RandomBytes(rng, EVP_CIPHER_get_key_length(cipher))),
      iv(RandomBytes(rng, EVP_CIPHER_get_iv_length(cipher))),
      in(RandomBytes(rng, len)),
      out(len),
      wait_(ASYNC_WAIT_CTX_new()) {
  if (!EVP_EncryptInit_ex2(ctx.get(), cipher, key.data(),
                           iv.empty() ? nullptr : iv.data(), nullptr)) {
    ctx.reset();
    return;
  }
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
}

AsyncUpdate::~AsyncUpdate() {
  if (job_ == nullptr) ASYNC_WAIT_CTX_free(wait_);
}

int AsyncUpdate::Run(void *arg) {
  AsyncUpdate &update = **static_cast<AsyncUpdate **>(arg);
  int len = 0;
  return update.ctx != nullptr &&
         EVP_EncryptUpdate(update.ctx.get(), update.out.data(), &len,
                           update.in.data(),
                           static_cast<int>(update.in.size())) &&
         static_cast<size_t>(len) == update.in.size();
}

int AsyncUpdate::Step() {
  int ret = 0;
  const int status =
      ASYNC_start_job(&job_, wait_, &ret, Run, &self_, sizeof(self_));
  if (status == ASYNC_PAUSE) return ASYNC_PAUSE;
  job_ = nullptr;
  return status == ASYNC_FINISH && ret == 1 ? ASYNC_FINISH : ASYNC_ERR;
}

bool AsyncUpdate::RunToEnd() {
  int status;
  while ((status = Step()) == ASYNC_PAUSE) {
  }
  return status == ASYNC_FINISH;
}

void AsyncUpdate::Abandon() {
  if (job_ == nullptr) return;
  KeepAbandoned(job_, wait_);
  job_ = nullptr;
  wait_ = nullptr;
}

Bytes EncryptWith(const EVP_CIPHER *cipher, const Bytes &key, const Bytes &iv,
                  const Bytes &in) {
  CipherCtxPtr ctx = NewCipherCtx();
  Bytes out(in.size());
  int len = 0;
  if (!EVP_EncryptInit_ex2(ctx.get(), cipher, key.data(),
                           iv.empty() ? nullptr : iv.data(), nullptr)) {
    return {};
  }
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  if (!EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(),
                         static_cast<int>(in.size()))) {
    return {};
  }
  return out;
}

}  // namespace aesmux::test
