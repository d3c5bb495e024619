// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/throughput.h"

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/err.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <latch>
#include <thread>

namespace aesmux::cli {
namespace {

}  // namespace

double Now(Clock clock) {
  timespec now{};
  clock_gettime(clock == Clock::kThreadCpu ? CLOCK_THREAD_CPUTIME_ID
                                           : CLOCK_MONOTONIC,
                &now);
  return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
}

std::unique_ptr<Workload> Workload::Create(const EVP_CIPHER *cipher,
                                           Direction direction, size_t size,
                                           std::string *error) {
  std::unique_ptr<Workload> w(new Workload);
  w->ctx_ = EVP_CIPHER_CTX_new();
  w->size_ = size;
  w->encrypt_ = direction == Direction::kEncrypt;
  w->gcm_ = EVP_CIPHER_get_mode(cipher) == EVP_CIPH_GCM_MODE;
  w->in_.resize(size);
  w->out_.resize(size + 32);
  for (size_t i = 0; i < size; ++i) w->in_[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> key(EVP_CIPHER_get_key_length(cipher));
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i + 1);
  // XTS refuses equal key halves: the pattern above has none.
  for (size_t i = 0; i < sizeof(w->iv_); ++i) w->iv_[i] = static_cast<uint8_t>(i);
  const auto fail = [&](const char *what) {
    *error = std::string(what) + " failed: " + EVP_CIPHER_get0_name(cipher);
    ERR_clear_error();
    return nullptr;
  };
  if (w->gcm_ && !w->encrypt_) {
    // The ciphertext and tag of the same message, to decrypt it again.
    EVP_CIPHER_CTX *seal = EVP_CIPHER_CTX_new();
    int len = 0;
    const bool sealed =
        EVP_EncryptInit_ex2(seal, cipher, key.data(), w->iv_, nullptr) &&
        EVP_EncryptUpdate(seal, w->out_.data(), &len, w->in_.data(),
                          static_cast<int>(size)) &&
        EVP_EncryptFinal_ex(seal, w->out_.data() + len, &len) &&
        EVP_CIPHER_CTX_ctrl(seal, EVP_CTRL_AEAD_GET_TAG, 16, w->tag_);
    EVP_CIPHER_CTX_free(seal);
    if (!sealed) return fail("sealing a GCM message");
    std::copy(w->out_.begin(), w->out_.begin() + size, w->in_.begin());
  }
  if (!EVP_CipherInit_ex2(w->ctx_, cipher, key.data(), w->iv_,
                          w->encrypt_ ? 1 : 0, nullptr)) {
    return fail("EVP_CipherInit_ex2");
  }
  EVP_CIPHER_CTX_set_padding(w->ctx_, 0);
  // Warm up: key schedules, first touches of the buffers.
  for (int i = 0; i < 4; ++i) {
    if (!w->Op()) return fail("a first operation");
  }
  return w;
}

Workload::~Workload() { EVP_CIPHER_CTX_free(ctx_); }

bool Workload::Op() {
  int len = 0;
  if (!gcm_) {
    return EVP_CipherUpdate(ctx_, out_.data(), &len, in_.data(),
                            static_cast<int>(size_)) == 1;
  }
  if (!EVP_CipherInit_ex2(ctx_, nullptr, nullptr, iv_, -1, nullptr)) {
    return false;
  }
  if (!encrypt_ &&
      !EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_SET_TAG, 16, tag_)) {
    return false;
  }
  return EVP_CipherUpdate(ctx_, out_.data(), &len, in_.data(),
                          static_cast<int>(size_)) == 1 &&
         EVP_CipherFinal_ex(ctx_, out_.data() + len, &len) == 1;
}

double Workload::Run(double seconds, Clock clock) {
  // Batches of operations between clock reads, doubled while a batch takes
  // under 50 µs, so that reading the clock (a system call for CPU time)
  // costs nothing next to them.
  uint64_t ops = 0;
  size_t batch = 1;
  const double start = Now(clock);
  const double wall_end = Now(Clock::kWall) + kMaxWallFactor * seconds;
  double now = start;
  while (now - start < seconds && Now(Clock::kWall) < wall_end) {
    const double batch_start = now;
    for (size_t i = 0; i < batch; ++i) {
      if (!Op()) return 0;
    }
    ops += batch;
    now = Now(clock);
    if (now - batch_start < 50e-6) batch *= 2;
  }
  return now > start ? static_cast<double>(ops) * size_ / (now - start) : 0;
}

namespace {

struct JobArgs {
  Workload *workload;
  Clock clock;
  double deadline;       // on `clock`
  double wall_deadline;  // on the wall clock
  const bool *stop;  // set by the scheduler once the deadline has passed
  uint64_t ops = 0;
  bool failed = false;
};

// ASYNC_start_job hands the job a copy of its argument: a JobArgs*. A job
// that pauses learns of the deadline from the scheduler, which reads the
// clock once a round; one that never pauses reads it every 256 operations.
int RunJob(void *arg) {
  JobArgs &job = **static_cast<JobArgs **>(arg);
  for (int unchecked = 0; !*job.stop; ++unchecked) {
    if (!job.workload->Op()) {
      job.failed = true;
      return 0;
    }
    ++job.ops;
    if (unchecked == 256) {
      if (Now(job.clock) >= job.deadline ||
          Now(Clock::kWall) >= job.wall_deadline) {
        return 1;
      }
      unchecked = 0;
    }
  }
  return 1;
}

}  // namespace

double RunAsyncJobs(const std::vector<Workload *> &jobs, double seconds,
                    Clock clock) {
  if (jobs.empty() || !ASYNC_is_capable() ||
      !ASYNC_init_thread(jobs.size(), jobs.size())) {
    return 0;
  }
  const double start = Now(clock);
  const double wall_end = Now(Clock::kWall) + kMaxWallFactor * seconds;
  bool stop = false;
  std::vector<ASYNC_JOB *> handles(jobs.size(), nullptr);
  std::vector<ASYNC_WAIT_CTX *> waits(jobs.size());
  std::vector<JobArgs> args(jobs.size());
  std::vector<bool> finished(jobs.size(), false);
  for (size_t j = 0; j < jobs.size(); ++j) {
    waits[j] = ASYNC_WAIT_CTX_new();
    args[j] = {jobs[j], clock, start + seconds, wall_end, &stop};
  }
  bool failed = false;
  for (size_t running = jobs.size(); running > 0 && !failed;) {
    stop = Now(clock) >= start + seconds || Now(Clock::kWall) >= wall_end;
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (finished[j]) continue;
      int ret = 0;
      JobArgs *arg = &args[j];
      const int status = ASYNC_start_job(&handles[j], waits[j], &ret, RunJob,
                                         &arg, sizeof(arg));
      if (status == ASYNC_ERR || status == ASYNC_NO_JOBS) {
        failed = true;
        break;
      }
      if (status == ASYNC_FINISH) {
        finished[j] = true;
        --running;
      }
    }
  }
  const double elapsed = Now(clock) - start;
  uint64_t ops = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    ops += args[j].ops;
    failed = failed || args[j].failed;
  }
  // A failed run may leave paused jobs: run them to their end first.
  for (size_t j = 0; j < jobs.size(); ++j) {
    while (!finished[j] && handles[j] != nullptr) {
      int ret = 0;
      JobArgs *arg = &args[j];
      if (ASYNC_start_job(&handles[j], waits[j], &ret, RunJob, &arg,
                          sizeof(arg)) != ASYNC_PAUSE) {
        break;
      }
    }
    ASYNC_WAIT_CTX_free(waits[j]);
  }
  ASYNC_cleanup_thread();
  if (failed || elapsed <= 0) return 0;
  return static_cast<double>(ops) * jobs.front()->size() / elapsed;
}

double RunOnThreads(const std::vector<Workload *> &workloads,
                    double seconds) {
  if (workloads.empty()) return 0;
  std::atomic<uint64_t> ops{0};
  std::atomic<bool> stop{false}, failed{false};
  std::latch started(static_cast<std::ptrdiff_t>(workloads.size()) + 1);
  std::vector<std::thread> threads;
  for (Workload *w : workloads) {
    threads.emplace_back([&, w] {
      started.arrive_and_wait();
      while (!stop.load(std::memory_order_relaxed)) {
        if (!w->Op()) {
          failed = true;
          return;
        }
        ops.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  started.arrive_and_wait();
  // Counted from here: thread start-up is not what is measured.
  const uint64_t ops_before = ops.load();
  const double start = Now(Clock::kWall);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const uint64_t ops_after = ops.load();
  const double elapsed = Now(Clock::kWall) - start;
  stop = true;
  for (std::thread &thread : threads) thread.join();
  if (failed || elapsed <= 0) return 0;
  return static_cast<double>(ops_after - ops_before) *
         workloads.front()->size() / elapsed;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace aesmux::cli
