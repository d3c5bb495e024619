// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The offload device removed while streams run on it: in the x86 guest of
// the VM suites, QEMU's virtio-crypto device is unplugged through QEMU's
// monitor (device_del, asked of the host over the control port) while
// threads and ASYNC jobs encrypt CBC streams on it. Linux 6.1's
// virtio_crypto driver drops the requests it has in flight when its device
// goes (they never complete) and frees the device under the kernel keys
// still bound to it (the next request on one, or its close, uses freed
// memory). aesmux must: give up the lost requests and serve them on the
// CPU from their input, so every stream's output is the default
// provider's, whole; keep every thread and job moving (no wait without
// end); send nothing more to the driver; and say what happened in
// afalg.cbc (`aesmux info`).
//
// It leaves the guest's kernel as the driver left it (keys bound to a gone
// device, kernel workers waiting for ever), so the VM script runs it last
// and does not wait for this process to exit: its exit closes those keys.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "provider/afalg/afalg.h"
#include "provider/afalg/kernel_crypto.h"
#include "tests/afalg/afalg_support.h"

namespace aesmux::test {
namespace {

using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// One CBC stream: one context for its whole life, updates of random
// lengths (in place every other one), each checked against a twin on the
// default provider that encrypts the same stream.
class Stream {
 public:
  Stream(const ProviderEnv &env, uint64_t seed)
      : rng_(seed), ctx_(NewCipherCtx()), twin_(NewCipherCtx()) {
    const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
    CipherPtr ours = env.Aesmux("AES-128-CBC");
    CipherPtr theirs = env.Default("AES-128-CBC");
    ok_ = EVP_EncryptInit_ex2(ctx_.get(), ours.get(), key.data(), iv.data(),
                              nullptr) == 1 &&
          EVP_EncryptInit_ex2(twin_.get(), theirs.get(), key.data(),
                              iv.data(), nullptr) == 1;
    EVP_CIPHER_CTX_set_padding(ctx_.get(), 0);
    EVP_CIPHER_CTX_set_padding(twin_.get(), 0);
  }

  // One update; false if EVP failed or the output differs from the twin's.
  bool Update() {
    const size_t len = 16 * (1 + rng_() % 1024);
    Bytes data = RandomBytes(rng_, len), expected(len), out(len);
    int out_len = 0, expected_len = 0;
    const bool in_place = updates_.load() % 2 == 1;
    if (!EVP_EncryptUpdate(twin_.get(), expected.data(), &expected_len,
                           data.data(), static_cast<int>(len))) {
      ok_ = false;
    }
    uint8_t *dst = in_place ? data.data() : out.data();
    if (!ok_ ||
        !EVP_EncryptUpdate(ctx_.get(), dst, &out_len, data.data(),
                           static_cast<int>(len)) ||
        out_len != expected_len ||
        std::memcmp(dst, expected.data(), len) != 0) {
      ok_ = false;
      return false;
    }
    ++updates_;
    return true;
  }

  // Whether every update so far gave the default provider's output: the
  // whole stream, chaining across the removal.
  bool ok() const { return ok_; }

  std::atomic<uint64_t> updates_{0};

 private:
  std::mt19937_64 rng_;
  CipherCtxPtr ctx_, twin_;
  bool ok_ = false;
};

std::atomic<bool> g_stop{false};

// One update per job, as a server does one record per job: a job on the
// CPU's path never pauses, and would keep the others waiting.
int UpdateInJob(void *arg) {
  return (*static_cast<Stream **>(arg))->Update() ? 1 : 0;
}

TEST(AfalgDeviceRemoval, StreamsGoOnOnTheCpu) {
  SKIP_WITHOUT_AFALG();
  if (AskVmHost("count removal-start").empty()) {
    GTEST_SKIP() << "not in the guest of the VM suites (no AFALG_VM_CONTROL)";
  }
  std::string proc_crypto;
  afalg::ReadWholeFile("/proc/crypto", &proc_crypto);
  const std::optional<afalg::CryptoAlg> offload =
      afalg::BestOffloadImplementation(proc_crypto, "cbc(aes)", "skcipher");
  ASSERT_TRUE(offload && offload->driver == "virtio_crypto_aes_cbc")
      << "no virtio-crypto device in this guest";
  auto env = LoadAfalgEnv({"afalg = auto", "cbc.afalg_min_len = 0"});
  ASSERT_TRUE(env->loaded()) << env->error();
  ASSERT_TRUE(AfalgReport(*env, "cbc").starts_with("on (auto)"))
      << AfalgReport(*env, "cbc");

  constexpr int kThreads = 4;
  constexpr int kJobs = 8;
  std::vector<std::unique_ptr<Stream>> streams;
  for (int s = 0; s < kThreads + kJobs; ++s) {
    streams.push_back(std::make_unique<Stream>(*env, 1000 + s));
  }
  std::mutex mutex;
  std::condition_variable finished_cv;
  int finished = 0;
  std::vector<std::thread> threads;
  auto done = [&] {
    std::lock_guard lock(mutex);
    ++finished;
    finished_cv.notify_all();
  };
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!g_stop.load() && streams[t]->Update()) {
      }
      done();
    });
  }
  // A thread whose request the driver lost cannot exit: Linux 6.1's exit
  // waits for its io_uring worker, which waits for that request for ever.
  // So the threads are waited for until their work is done, not joined.
  for (std::thread &thread : threads) thread.detach();
  std::atomic<int> job_failures{0};
  std::thread([&] {
    ASYNC_init_thread(kJobs, kJobs);
    std::vector<void *> args;
    for (int j = 0; j < kJobs; ++j) args.push_back(streams[kThreads + j].get());
    while (!g_stop.load()) {
      for (int result : RunJobs(kJobs, UpdateInJob, args)) {
        if (result != 1) job_failures.fetch_add(1);
      }
    }
    ASYNC_cleanup_thread();
    done();
  }).detach();

  // Every stream on the device first.
  const auto wait_until = [&](auto condition, seconds limit) {
    const auto deadline = Clock::now() + limit;
    while (!condition() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return condition();
  };
  const bool all_going = wait_until(
      [&] {
        for (const auto &stream : streams) {
          if (stream->updates_.load() < 5) return false;
        }
        return true;
      },
      seconds(120));
  const uint64_t on_device = env->Stat("AES-128-CBC", "afalg", "requests");
  EXPECT_TRUE(all_going);
  EXPECT_GT(on_device, 0u);

  // Unplug the device while they run.
  const std::string unplugged = AskVmHost("device_del crypto0");
  EXPECT_EQ(unplugged, "ok");
  const bool noticed = wait_until(
      [&] {
        return AfalgReport(*env, "cbc").find("left /proc/crypto") !=
               std::string::npos;
      },
      seconds(90));
  EXPECT_TRUE(noticed) << AfalgReport(*env, "cbc");
  // And on the CPU since: each stream takes more updates.
  std::vector<uint64_t> at_removal;
  for (const auto &stream : streams) at_removal.push_back(stream->updates_.load());
  const bool going_on = wait_until(
      [&] {
        for (size_t s = 0; s < streams.size(); ++s) {
          if (streams[s]->updates_.load() < at_removal[s] + 5) return false;
        }
        return true;
      },
      seconds(60));
  EXPECT_TRUE(going_on) << "a stream stopped moving after the removal";
  g_stop.store(true);
  {
    std::unique_lock lock(mutex);
    if (!finished_cv.wait_for(lock, seconds(60), [&] {
          return finished == kThreads + 1;
        })) {
      // A thread waits for ever: report and leave (it cannot be joined).
      std::printf("%d of %d threads did not finish: they hang after the "
                  "device was removed\n",
                  kThreads + 1 - finished, kThreads + 1);
      std::fflush(stdout);
      _exit(1);
    }
  }

  for (size_t s = 0; s < streams.size(); ++s) {
    EXPECT_TRUE(streams[s]->ok())
        << "stream " << s << " (" << streams[s]->updates_.load()
        << " updates) differs from the default provider's";
  }
  EXPECT_EQ(job_failures.load(), 0);
  const uint64_t gone = env->Stat("AES-128-CBC", "afalg-fallback:driver_gone",
                                  "requests");
  EXPECT_GT(gone, 0u);
  const std::string report = AfalgReport(*env, "cbc");
  EXPECT_NE(report.find("virtio_crypto_aes_cbc left /proc/crypto (its device "
                        "was removed)"),
            std::string::npos)
      << report;
  std::printf("%llu requests on the device before it went, %llu since on the "
              "CPU (driver_gone)\nafalg.cbc: %s\n",
              static_cast<unsigned long long>(on_device),
              static_cast<unsigned long long>(gone), report.c_str());
  std::fflush(stdout);
  // The streams' contexts stay: their kernel keys are bound to a driver
  // that is gone (aesmux never closes those), and the threads that lost
  // requests never exit.
  for (auto &stream : streams) (void)stream.release();
  (void)env.release();
}

}  // namespace
}  // namespace aesmux::test
