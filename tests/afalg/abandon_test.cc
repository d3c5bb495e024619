// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// ASYNC jobs abandoned on the afalg path: a paused job's request sits in
// its thread's io_uring ring, queued or already submitted by another job's
// flush. When the application frees or re-keys the context, the request is
// cancelled (its SQEs become NOPs) or waited for: the kernel never writes
// the buffers the application reuses afterwards (on main it overwrote
// 16310 of 16400 bytes of one), the request's op socket is closed, and a
// re-keyed context goes on as the default provider's would. Also many jobs
// resumed in random order with some abandoned.
#include <dirent.h>
#include <gtest/gtest.h>
#include <openssl/async.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/afalg/afalg_support.h"
#include "tests/support/async_update.h"

namespace aesmux::test {
namespace {

constexpr uint8_t kReused = 0x5a;

size_t OpenFds() {
  size_t count = 0;
  if (DIR *dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++count;
    closedir(dir);
  }
  return count;
}

bool Reused(const Bytes &buffer) {
  return std::all_of(buffer.begin(), buffer.end(),
                     [](uint8_t byte) { return byte == kReused; });
}

struct Case {
  const char *algorithm;
  bool submitted;  // another job's flush has submitted the request
  bool free_ctx;   // freed (else re-keyed)
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.algorithm << (c.submitted ? " submitted" : " queued")
      << (c.free_ctx ? ", freed" : ", re-keyed");
}

std::string CaseName(const ::testing::TestParamInfo<Case> &info) {
  std::string name = info.param.algorithm;
  std::replace(name.begin(), name.end(), '-', '_');
  return name + (info.param.submitted ? "_Submitted" : "_Queued") +
         (info.param.free_ctx ? "_Freed" : "_Rekeyed");
}

class AfalgAbandonTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_AFALG();
    ASSERT_TRUE(ASYNC_is_capable());
    env_ = LoadAfalgEnv();
    ASSERT_TRUE(env_->loaded()) << env_->error();
    ours_ = env_->Aesmux(GetParam().algorithm);
    reference_ = env_->Default(GetParam().algorithm);
    ASSERT_TRUE(ASYNC_init_thread(0, 0));
  }
  void TearDown() override { ASYNC_cleanup_thread(); }

  std::unique_ptr<ProviderEnv> env_;
  CipherPtr ours_, reference_;
  std::mt19937_64 rng_{0xaba7d};
};

// Job A pauses with 16400 bytes on the ring (and, if `submitted`, job B's
// flush submits them); the application abandons A, frees or re-keys its
// context and reuses its output buffer; job C runs and flushes the ring.
TEST_P(AfalgAbandonTest, TheKernelLeavesAReusedBufferAlone) {
  const Case &c = GetParam();
  // The thread's ring exists before the descriptors are counted.
  AsyncUpdate warm_up(ours_.get(), rng_, 4096);
  ASSERT_TRUE(warm_up.RunToEnd());
  const size_t fds = OpenFds();
  {
    auto a = std::make_unique<AsyncUpdate>(ours_.get(), rng_, 16400);
    // Only the ring makes a job pause here.
    ASSERT_EQ(a->Step(), ASYNC_PAUSE) << "the request was not queued";
    if (c.submitted) {
      AsyncUpdate b(ours_.get(), rng_, 4096);
      ASSERT_TRUE(b.RunToEnd());
      EXPECT_EQ(ToHex(b.out),
                ToHex(EncryptWith(reference_.get(), b.key, b.iv, b.in)));
    }
    a->Abandon();
    Bytes key = a->key, iv = a->iv;
    if (c.free_ctx) {
      a->ctx.reset();
    } else {
      key = RandomBytes(rng_, key.size());
      iv = RandomBytes(rng_, iv.size());
      ASSERT_TRUE(EVP_EncryptInit_ex2(a->ctx.get(), nullptr, key.data(),
                                      iv.empty() ? nullptr : iv.data(),
                                      nullptr));
    }
    std::fill(a->out.begin(), a->out.end(), kReused);

    AsyncUpdate c_job(ours_.get(), rng_, 4096);
    ASSERT_TRUE(c_job.RunToEnd());
    EXPECT_EQ(ToHex(c_job.out), ToHex(EncryptWith(reference_.get(), c_job.key,
                                                  c_job.iv, c_job.in)));
    EXPECT_TRUE(Reused(a->out))
        << "the kernel wrote into the abandoned request's reused buffer";
    if (!c.free_ctx) {
      const Bytes in = RandomBytes(rng_, 1024);
      Bytes out(in.size());
      int len = 0;
      ASSERT_TRUE(EVP_EncryptUpdate(a->ctx.get(), out.data(), &len, in.data(),
                                    static_cast<int>(in.size())));
      EXPECT_EQ(ToHex(out), ToHex(EncryptWith(reference_.get(), key, iv, in)));
    }
  }
  EXPECT_EQ(OpenFds(), fds) << "descriptors left open";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AfalgAbandonTest,
    ::testing::Values(Case{"AES-128-CBC", false, true},
                      Case{"AES-128-CBC", true, true},
                      Case{"AES-128-CBC", false, false},
                      Case{"AES-256-CTR", false, true},
                      Case{"AES-256-CTR", true, false},
                      Case{"AES-128-XTS", false, true},
                      Case{"AES-128-GCM", false, true},
                      Case{"AES-128-GCM", true, true},
                      Case{"AES-256-GCM", false, false}),
    CaseName);

// Many jobs on the ring, resumed in random order, one in about 20 pauses
// abandoned with its context freed and its buffer reused: every finished
// job agrees with the default provider, no reused buffer is written, no
// descriptor is left open.
TEST(AfalgAbandonStress, JobsInRandomOrderSomeAbandoned) {
  SKIP_WITHOUT_AFALG();
  ASSERT_TRUE(ASYNC_is_capable());
  auto env = LoadAfalgEnv();
  ASSERT_TRUE(env->loaded()) << env->error();
  const char *const kAlgorithms[] = {"AES-128-CBC", "AES-256-CBC",
                                     "AES-128-CTR", "AES-128-ECB",
                                     "AES-256-GCM"};
  std::vector<CipherPtr> ours, references;
  for (const char *algorithm : kAlgorithms) {
    ours.push_back(env->Aesmux(algorithm));
    references.push_back(env->Default(algorithm));
  }
  ASSERT_TRUE(ASYNC_init_thread(0, 0));
  std::mt19937_64 rng(0x5ab);
  AsyncUpdate warm_up(ours[0].get(), rng, 4096);
  ASSERT_TRUE(warm_up.RunToEnd());
  const size_t fds = OpenFds();
  struct Live {
    std::unique_ptr<AsyncUpdate> update;
    size_t algorithm;
  };
  std::vector<Live> live;
  std::vector<std::unique_ptr<AsyncUpdate>> reused;
  int finished = 0, wrong = 0, failed = 0;
  for (int started = 0; started < 300 || !live.empty();) {
    if (started < 300 && live.size() < 16) {
      const size_t algorithm = rng() % std::size(kAlgorithms);
      live.push_back({std::make_unique<AsyncUpdate>(
                          ours[algorithm].get(), rng, 16 * (1 + rng() % 1024)),
                      algorithm});
      ++started;
    }
    const size_t index = rng() % live.size();
    Live &job = live[index];
    bool over = false;
    if (job.update->paused() && rng() % 20 == 0) {
      job.update->Abandon();
      job.update->ctx.reset();
      std::fill(job.update->out.begin(), job.update->out.end(), kReused);
      reused.push_back(std::move(job.update));
      over = true;
    } else {
      const int status = job.update->Step();
      if (status != ASYNC_PAUSE) {
        over = true;
        ++finished;
        if (status != ASYNC_FINISH) {
          ++failed;
        } else if (job.update->out !=
                   EncryptWith(references[job.algorithm].get(),
                               job.update->key, job.update->iv,
                               job.update->in)) {
          ++wrong;
        }
      }
    }
    if (over) {
      live[index] = std::move(live.back());
      live.pop_back();
    }
  }
  EXPECT_EQ(failed, 0) << "of " << finished;
  EXPECT_EQ(wrong, 0) << "of " << finished;
  EXPECT_GT(reused.size(), 0u);
  size_t overwritten = 0;
  for (const auto &update : reused) overwritten += !Reused(update->out);
  EXPECT_EQ(overwritten, 0u) << "of " << reused.size() << " reused buffers";
  EXPECT_EQ(OpenFds(), fds) << "descriptors left open";
  ASYNC_cleanup_thread();
}

}  // namespace
}  // namespace aesmux::test
