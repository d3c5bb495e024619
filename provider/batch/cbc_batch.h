// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Batching of CBC encryptions into multi-buffer lanes:
//
// - Inside an OpenSSL ASYNC job (`openssl speed -async_jobs N`, async-mode
//   servers) a request is queued, the job pauses with a wait fd that is
//   already readable, and when it resumes it flushes whatever has queued by
//   then; the other jobs' requests complete in that flush. No clock.
// - From synchronous callers, when the router says so (more threads than
//   CPUs making CBC encryptions of at least cbc.mb_threads_min_len bytes,
//   batching not resting: route/router.h), flat combining with bounds
//   (internal/shard.h): a caller stages its request in its slot and
//   publishes it; the arrival that completes a batch runs it; no caller
//   waits for peers much longer than its request takes alone, and one
//   whose combiner was descheduled takes its request back and runs it
//   alone. The threads form up to one group (shard) per CPU, one per
//   batch's worth of threads.
// - A lone request in an ASYNC job (nothing else queued) completes in its
//   own flush, and after a few such flushes the thread's next requests run
//   at once on the single-stream kernel.
//
// Nothing here throws: without memory for lanes, slots or staging,
// requests run alone. Which CBC encryptions come here is the router's
// decision, and it counts each request on the path EncryptCbc says it
// took; the kernel calls are counted here (batches and lanes filled per
// algorithm).
//
// Three parts sharing one sequence (internal/lanes.h): async_jobs.cc
// (ASYNC jobs), combiner.cc with shard.cc (threads; EncryptCbc() itself),
// pipelines.cc (EncryptCbcStreams()).
//
// After fork(), the child's combiner, lane managers and wait fd are its
// own (core/process.h): it never waits for a combiner that was a parent
// thread, and never runs a request a parent thread published or queued.
#ifndef AESMUX_PROVIDER_BATCH_CBC_BATCH_H_
#define AESMUX_PROVIDER_BATCH_CBC_BATCH_H_

// Layers (DEVELOPERS.md): only what links aesmux_batch includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_batch)
#error "provider/batch/cbc_batch.h belongs to a layer above the one that includes it"
#endif

#include <openssl/async.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/kernels.h"
#include "kernels/mb/lane_manager.h"
#include "kernels/tiers.h"
#include "provider/core/algorithm.h"

namespace aesmux::batch {

struct JobQueue;

// A context's request that a paused ASYNC job left queued in its thread's
// lanes (see EncryptCbc). The context cancels it when it is freed,
// re-keyed or re-initialised, or runs another request: an application
// that abandons a paused job (servers drop the jobs of connections they
// close) must not have its request run later, by another job's flush, on a
// key it has freed and into buffers it has reused.
class QueuedRequest {
 public:
  QueuedRequest() = default;
  ~QueuedRequest();  // cancels
  QueuedRequest(const QueuedRequest &) = delete;
  QueuedRequest &operator=(const QueuedRequest &) = delete;

  // Takes the request out of its lanes if it is still there: it never runs
  // further; what already ran of it stays in its output, and its chaining
  // value is not updated. Safe on any thread (it waits for a flush running
  // on the queue's thread); does nothing if no request is queued.
  void Cancel() {
    if (queue_ != nullptr) CancelHeld();
  }

 private:
  friend struct JobQueue;
  [[gnu::cold]] void CancelHeld();
  JobQueue *queue_ = nullptr;  // a counted reference (internal/lanes.h)
  kernels::mb::CbcLaneManager *manager_ = nullptr;
  kernels::mb::CbcJob *job_ = nullptr;
};

// One CBC encryption of whole blocks under an expanded encryption key.
struct CbcRequest {
  core::Alg alg;                // for statistics
  const aesmux_aes_key *key;    // encryption schedule
  uint8_t *iv;                  // in: chaining value; out: last block
  uint8_t *out;
  const uint8_t *in;
  size_t len;                   // a multiple of 16
  // The context's hold on the request if its job pauses with it queued;
  // nullptr where nothing is left queued (pipelines).
  QueuedRequest *queued = nullptr;
};

// What EncryptCbc did with a request.
enum class Ran : uint8_t {
  kAlone,    // at once, on the single-stream kernel: the simd path
  kInLanes,  // in a multi-buffer batch: the mb path
  // Not run: its ASYNC job paused, and was resumed after request.queued was
  // cancelled, or in a child after a fork() (the request stays with the
  // parent's lanes); its output is then unspecified.
  kNot,
};

class Combiner;  // combiner.cc

// What the router asks about the caller of one request
// (route::BlockRoute::Choose), each question at most once, and only of a
// request the mb path could take, and what it decides:
// - InAsyncJob(): whether the calling thread runs in an OpenSSL ASYNC job
//   (whose requests batch with the thread's other jobs'). The answer is kept
//   for EncryptCbc, so that a request asks OpenSSL once (a question costs a
//   large part of a 16-byte CBC encryption: BENCHMARKS.md, "How much do
//   multi-buffer lanes and threads gain?").
// - OtherThreads(): how many other threads are making CBC encryptions that
//   could batch with this one. Asking counts the calling thread among them
//   until EncryptCbc has served the request, so the router that asks must
//   send it there (the mb path). Waiting for a batch pays only when
//   threads outnumber the CPUs: with no more of them than CPUs, each runs
//   at once, in parallel.
// - ThreadsRest(len): whether batching threads' requests of about `len`
//   bytes rests: recent ones waited for peers in vain (found nobody by
//   their deadline, were withdrawn from a descheduled combiner) or
//   finished late, so the next ones run alone for a while.
// - set_batches(): the router's decision for a request it counted: batch
//   it with other threads', or run it alone.
// A probe is made for every update of a short request, so it costs one
// store (callgrind counts it per 16-byte update) and no destructor: the
// members past job_ are set by OtherThreads() before anything reads them.
class CallerProbe {
 public:
  CallerProbe() = default;
  CallerProbe(const CallerProbe &) = delete;
  CallerProbe &operator=(const CallerProbe &) = delete;

  bool InAsyncJob() const {
    job_ = ASYNC_get_current_job();
    return job_ != nullptr;
  }
  // The calling thread's job (null outside one), asking only if not yet.
  ASYNC_JOB *job() const {
    return job_ != NotAsked() ? job_ : ASYNC_get_current_job();
  }

  // 0 if there is no memory for the thread combiner.
  uint32_t OtherThreads();
  bool ThreadsRest(uint64_t len) const;
  void set_batches(bool batches) { batches_ = batches; }

 private:
  friend Ran EncryptCbc(const kernels::Tier &tier, const CbcRequest &request,
                        const CallerProbe &caller);
  static ASYNC_JOB *NotAsked() {
    return reinterpret_cast<ASYNC_JOB *>(uintptr_t{1});
  }

  mutable ASYNC_JOB *job_ = NotAsked();
  Combiner *combiner_;  // counted in; null if there is no memory for one
  uint32_t others_;
  bool batches_;
};

// Encrypts `request`, in a multi-buffer batch of `tier`'s kernels when
// other requests are available, else alone with its single-stream CBC
// kernel; `caller` is the request's probe: in an ASYNC job the
// request batches with the thread's other jobs' (request.queued must be
// set); outside one, the router asked caller.OtherThreads() and decided
// whether it batches with other threads' (set_batches), which is not
// checked again here.
Ran EncryptCbc(const kernels::Tier &tier, const CbcRequest &request,
               const CallerProbe &caller);

// At provider init: reads what batching threads needs from the system
// (the CPU count), so that no request later makes a system call of a kind
// the process may have forbidden itself since (sshd's pre-authentication
// sandbox).
void Prepare();

// Frees the thread combiner unless a living thread has batched in it (such
// a thread keeps it until it exits, holding a slot or not, as it keeps
// aesmux.so mapped).
// Called when the last provider instance goes, so that unloading aesmux
// leaks nothing; the next request after a reload makes a new one.
void ReleaseIdleCombiner();

// Encrypts `requests` (independent streams, e.g. the pipes of OpenSSL's
// cipher pipeline API) together in multi-buffer lanes on this thread (the
// mb path). False, having done nothing, if there is no memory for the
// lanes.
bool EncryptCbcStreams(const kernels::Tier &tier,
                       std::span<const CbcRequest> requests);

}  // namespace aesmux::batch

#endif  // AESMUX_PROVIDER_BATCH_CBC_BATCH_H_
