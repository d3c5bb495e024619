#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Regenerates the multi-buffer table of BENCHMARKS.md: CBC encryption
# batched into multi-buffer lanes, in alternating runs, median of several
# runs per cell:
#  (a) openssl speed -evp -async_jobs 16, the default provider and aesmux;
#  (b) aesmux with -async_jobs 1 against aesmux without -async_jobs (what
#      a lone async job costs);
#  (c) threads_bench: threads encrypting 16 KiB records through EVP on the
#      default provider and on aesmux with batching off and on (all sizes
#      and background loads: bench/threads.sh).
#
# usage: bench/mb.sh [RUNS] [SECONDS]    (defaults: 5 runs of 1 s;
#                                                 openssl speed wants whole
#                                                 seconds)
# Environment: BENCH_THREADS (threads_bench's thread counts, default
#              1,2,4,8,16,32,64), AESMUX_KERNELS etc. as usual.
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

runs=${1:-5}
seconds=${2:-1}
threads=${BENCH_THREADS:-1,2,4,8,16,32,64}
# The table is of the default setting; the variable would also override
# threads_bench's batching-off configuration.
unset AESMUX_CBC_MB_MAX_LEN

install_deps
bench_match_tier
build >/dev/null
threads_bench=$AESMUX_BUILD/bench/provider/threads_bench
[ -x "$threads_bench" ] ||
  { echo "bench/mb.sh: no $threads_bench (AESMUX_BUILD_TESTS off?)" >&2; exit 1; }

# alternate COMMAND... -- COMMAND...: runs the two commands in turn $runs
# times; prints the median of each one's output.
alternate() {
  local first=() second=() a=() b=() r
  while [ "$1" != -- ]; do first+=("$1"); shift; done
  shift
  second=("$@")
  for ((r = 0; r < runs; r++)); do
    a+=("$("${first[@]}")")
    b+=("$("${second[@]}")")
    if [ -z "${a[-1]}" ] || [ -z "${b[-1]}" ]; then
      echo "bench/mb.sh: no rate from '${first[*]}' or '${second[*]}'" >&2
      exit 1
    fi
  done
  echo "$(printf '%s\n' "${a[@]}" | median) $(printf '%s\n' "${b[@]}" | median)"
}

# row ALG BYTES A B: a table row "| ALG | BYTES | A MB/s | B MB/s | B / A |"
# from two rates in bytes per second.
row() {
  awk -v s="$1" -v n="$2" -v a="$3" -v b="$4" 'BEGIN {
    printf "| %s | %d | %.0f | %.0f | %.2f |\n", s, n, a / 1e6, b / 1e6, b / a }'
}

bench_header
echo "# multi-buffer CBC encryption; openssl speed -evp, ${seconds}s per run;" \
     "median of $runs alternating runs"
echo
echo "openssl speed -async_jobs 16:"
echo
printf '| algorithm | bytes | default MB/s | aesmux MB/s | ratio |\n'
printf '|---|---:|---:|---:|---:|\n'
for alg in aes-128-cbc aes-256-cbc; do
  for bytes in 1024 16384; do
    pair=$(alternate speed_bps default "$alg" "$bytes" "$seconds" -async_jobs 16 \
                  -- speed_bps aesmux "$alg" "$bytes" "$seconds" -async_jobs 16)
    read -r base ours <<<"$pair"
    row "$alg" "$bytes" "$base" "$ours"
  done
done

echo
echo "aesmux, a lone async job against no async job:"
echo
printf '| algorithm | bytes | no -async_jobs MB/s | -async_jobs 1 MB/s | ratio |\n'
printf '|---|---:|---:|---:|---:|\n'
for bytes in 16384 1024; do
  pair=$(alternate speed_bps aesmux aes-128-cbc "$bytes" "$seconds" \
                -- speed_bps aesmux aes-128-cbc "$bytes" "$seconds" -async_jobs 1)
  read -r base ours <<<"$pair"
  row aes-128-cbc "$bytes" "$base" "$ours"
done

echo
echo "threads_bench: every thread encrypts 16384-byte AES-128-CBC records" \
     "through EVP; \"off\" is aesmux with cbc.mb_max_len = 0, \"mb\"" \
     "aesmux batching; mb % of records ran in lanes, lanes per kernel call," \
     "latencies of one request (bench/threads.sh for every size and" \
     "background load):"
echo
"$threads_bench" --alg AES-128-CBC --bytes 16384 --load 0 \
  --threads "$threads" --runs "$runs" --seconds "$seconds" | grep '^|'
