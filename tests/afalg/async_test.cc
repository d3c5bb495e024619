// OpenSSL ASYNC jobs on the afalg path: each job queues its request and
// pauses on the ring's eventfd; one io_uring_enter submits what all jobs
// queued. Many jobs in flight, results as the default provider's.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <poll.h>

#include <random>
#include <vector>

#include "tests/afalg/afalg_support.h"

namespace aesmux::test {
namespace {

struct JobArgs {
  const ProviderEnv *env;
  Bytes key, iv, plain, out;
};

int EncryptJob(void *arg) {
  auto *args = *static_cast<JobArgs **>(arg);
  CipherPtr cipher = args->env->Aesmux("AES-128-CBC");
  for (int i = 0; i < 4; ++i) {
    args->out = EvpCrypt(cipher.get(), args->key, args->iv, args->plain, true,
                         {}, true);
    if (args->out.empty()) return 0;
  }
  return 1;
}

TEST(AfalgAsync, ManyJobsInFlight) {
  SKIP_WITHOUT_AFALG();
  ASSERT_TRUE(ASYNC_is_capable());
  auto env = LoadAfalgEnv();
  ASSERT_TRUE(env->loaded()) << env->error();
  constexpr int kJobs = 8;
  std::mt19937_64 rng(5);
  std::vector<JobArgs> args(kJobs);
  std::vector<ASYNC_JOB *> jobs(kJobs, nullptr);
  std::vector<ASYNC_WAIT_CTX *> waits(kJobs);
  std::vector<int> results(kJobs, -1);
  ASSERT_TRUE(ASYNC_init_thread(kJobs, kJobs));
  for (int j = 0; j < kJobs; ++j) {
    args[j] = {env.get(), RandomBytes(rng, 16), RandomBytes(rng, 16),
               RandomBytes(rng, 16384), {}};
    waits[j] = ASYNC_WAIT_CTX_new();
  }
  const uint64_t before = env->Stat("AES-128-CBC", "afalg", "requests");
  int running = kJobs;
  std::vector<bool> started(kJobs, false);
  int rounds = 0;
  while (running > 0 && rounds++ < 100000) {
    for (int j = 0; j < kJobs; ++j) {
      if (results[j] != -1) continue;
      if (started[j]) {
        // Resume only jobs whose fd is readable, as openssl speed does.
        size_t fds = 0;
        ASYNC_WAIT_CTX_get_all_fds(waits[j], nullptr, &fds);
        if (fds == 1) {
          OSSL_ASYNC_FD fd;
          ASYNC_WAIT_CTX_get_all_fds(waits[j], &fd, &fds);
          pollfd p{fd, POLLIN, 0};
          if (poll(&p, 1, 1000) <= 0) continue;
        }
      }
      started[j] = true;
      JobArgs *arg = &args[j];
      int ret = 0;
      switch (ASYNC_start_job(&jobs[j], waits[j], &ret, EncryptJob, &arg,
                              sizeof(arg))) {
        case ASYNC_FINISH:
          results[j] = ret;
          --running;
          break;
        case ASYNC_PAUSE:
          break;
        default:
          results[j] = 0;
          --running;
      }
    }
  }
  CipherPtr reference = env->Default("AES-128-CBC");
  for (int j = 0; j < kJobs; ++j) {
    EXPECT_EQ(results[j], 1) << "job " << j;
    EXPECT_EQ(ToHex(args[j].out),
              ToHex(EvpCrypt(reference.get(), args[j].key, args[j].iv,
                             args[j].plain, true, {}, false)))
        << "job " << j;
    ASYNC_WAIT_CTX_free(waits[j]);
  }
  EXPECT_EQ(env->Stat("AES-128-CBC", "afalg", "requests"),
            before + kJobs * 4);
  ASYNC_cleanup_thread();
}

}  // namespace
}  // namespace aesmux::test
