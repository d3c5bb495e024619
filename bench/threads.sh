#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Regenerates the thread-batching table of BENCHMARKS.md: threads
# encrypting AES-128-CBC records through EVP beside 0, 1 and 2 CPU-bound
# processes, aesmux batching (the default settings) against aesmux with
# batching off and the default provider, medians of alternating runs, and
# the 99th-percentile latency of one request against its solo latency
# (bench/provider/threads_bench.cc says what each column is).
#
# usage: bench/threads.sh [RUNS] [SECONDS]   (defaults: 5 runs of 1 s;
#                                                     the full matrix takes
#                                                     about 3 x RUNS x SECONDS
#                                                     x 168 cells)
# Environment: BENCH_THREADS (default 1,2,4,8,16,32,64), BENCH_BYTES
#              (16,64,256,1024,4096,8192,16384,65536), BENCH_LOADS (0,1,2),
#              BENCH_ALG (AES-128-CBC), AESMUX_KERNELS etc. as usual.
# Wants a quiet machine: the background load is the benchmark's own.
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

runs=${1:-5}
seconds=${2:-1}
# The table is of the default settings; the variable would also override
# the batching-off configuration.
unset AESMUX_CBC_MB_MAX_LEN

install_deps
bench_match_tier
build >/dev/null
threads_bench=$AESMUX_BUILD/bench/provider/threads_bench
[ -x "$threads_bench" ] ||
  { echo "bench/threads.sh: no $threads_bench (AESMUX_BUILD_TESTS off?)" >&2; exit 1; }

bench_header
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$threads_bench" --alg "${BENCH_ALG:-AES-128-CBC}" \
  --threads "${BENCH_THREADS:-1,2,4,8,16,32,64}" \
  --bytes "${BENCH_BYTES:-16,64,256,1024,4096,8192,16384,65536}" \
  --load "${BENCH_LOADS:-0,1,2}" --runs "$runs" --seconds "$seconds"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
