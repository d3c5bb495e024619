// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Throughput of one cipher through EVP, as the aesmux command measures it
// for `bench` and `calibrate`: a context keyed once, out-of-place requests
// of one size on a fixed input, timed in batches between clock reads.
//
// One request ("operation") is what the router routes as one:
//   ECB, CBC, CTR, XTS  one EVP_CipherUpdate of `size` bytes (padding off;
//                       a stream that goes on, as `openssl speed` does);
//   GCM                 one message: IV set, one update of `size` bytes,
//                       final (to decrypt, with the right tag).
#ifndef AESMUX_PROVIDER_CLI_THROUGHPUT_H_
#define AESMUX_PROVIDER_CLI_THROUGHPUT_H_

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aesmux::cli {

enum class Direction { kEncrypt, kDecrypt };

// What a measurement's seconds are. The CPU time of the measuring thread
// leaves out the time the machine gave to other processes, so that results
// on a shared machine move less; it also leaves out work done off this
// thread (an offload engine behind the afalg path, io_uring workers), which
// only wall-clock time counts.
enum class Clock { kThreadCpu, kWall };

// Now, in seconds, on `clock`.
double Now(Clock clock);

// A measurement of N seconds of CPU time ends after at most this many
// times N seconds of wall-clock time, having measured fewer operations.
inline constexpr double kMaxWallFactor = 3;

// What `bench` and `calibrate` accept as a measurement's length (--seconds)
// and their count (--runs): a finite time that ends.
inline constexpr double kMinSeconds = 1e-4;
inline constexpr double kMaxSeconds = 3600;
inline constexpr int kMaxRuns = 1000;

class Workload {
 public:
  // Keys a context of `cipher` for `direction` and requests of `size`
  // bytes (XTS: at least 16; ECB and CBC: a multiple of 16). Null, with
  // the reason in `error`, if OpenSSL refuses.
  static std::unique_ptr<Workload> Create(const EVP_CIPHER *cipher,
                                          Direction direction, size_t size,
                                          std::string *error);
  ~Workload();
  Workload(const Workload &) = delete;
  Workload &operator=(const Workload &) = delete;

  // One operation; false if OpenSSL reports a failure.
  bool Op();

  // Runs operations for about `seconds` of `clock` (at most
  // kMaxWallFactor times that in wall-clock time, so that a machine busy
  // with other work does not stretch a measurement without end); bytes
  // per second of that clock, or 0 on failure.
  double Run(double seconds, Clock clock);

  size_t size() const { return size_; }

 private:
  Workload() = default;

  EVP_CIPHER_CTX *ctx_ = nullptr;
  bool gcm_ = false;
  bool encrypt_ = true;
  size_t size_ = 0;
  std::vector<uint8_t> in_, out_;
  uint8_t iv_[16] = {};
  uint8_t tag_[16] = {};
};

// Bytes per second of `jobs` run as that many OpenSSL ASYNC jobs on this
// thread for about `seconds` of `clock` (at most kMaxWallFactor times that
// of wall-clock time), resumed round robin as `openssl speed
// -async_jobs N` does: what multi-buffer batching serves. 0 on failure.
double RunAsyncJobs(const std::vector<Workload *> &jobs, double seconds,
                    Clock clock);

// Bytes per second of wall-clock time of `workloads` run each on its own
// thread at once, for about `seconds` once every thread has started: what
// the thread combiner serves when they outnumber the CPUs. 0 on failure.
double RunOnThreads(const std::vector<Workload *> &workloads, double seconds);

// The median of `values` (the upper middle of an even count); 0 if empty.
double Median(std::vector<double> values);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_THROUGHPUT_H_
