#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Regenerates the benchmark tables of BENCHMARKS.md: openssl speed -evp with
# the default provider and with aesmux, side by side in alternating runs,
# median of several runs per cell, ratios aesmux / default; then the same
# update loop in one process, the providers in alternating batches of
# about a millisecond (bench/provider/update_bench, not for GCM, whose
# speed loop re-keys), which resolves the short cells that one openssl
# speed run's noise hides.
#
# usage: bench/speed.sh [RUNS] [SECONDS]    (defaults: 3 runs of 1 s)
# Environment: BENCH_ALGS (space-separated specs, "-decrypt" suffix allowed),
#              BENCH_SIZES (bytes), BENCH_SERIES (the OpenSSL series, one
#              table each: default 3.0, the system's; 3.5 and 3.6 run that
#              version's openssl and libcrypto, with aesmux built against
#              its headers in build-bench-ossl<series>/), AESMUX_KERNELS
#              etc. as usual (a tier below the CPU's best is matched in
#              libcrypto: bench_match_tier, scripts/common.sh);
#              BENCH_SELF=1 measures the default provider against itself
#              (an A/A run: what the protocol's noise alone reads; no
#              update_bench table).
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

runs=${1:-3}
seconds=${2:-1}
algs=${BENCH_ALGS:-"aes-128-ecb aes-128-cbc aes-128-cbc-decrypt aes-256-cbc \
aes-128-ctr aes-256-ctr aes-128-xts aes-256-xts aes-128-gcm aes-256-gcm"}
sizes=${BENCH_SIZES:-"16 64 256 1024 8192 16384"}

install_deps dpkg-dev perl
bench_match_tier
second=aesmux
if [ -n "${BENCH_SELF:-}" ]; then second=default; fi

for series in ${BENCH_SERIES:-3.0}; do
  bench_build "$series" bench -- aesmux aesmux-cli update_bench
  bench_header
  echo "# openssl speed -evp, ${seconds}s per run, median of $runs alternating runs${BENCH_SELF:+; A/A: the default provider in both columns}"
  echo
  printf '| algorithm | bytes | default MB/s | %s MB/s | ratio |\n' "$second"
  printf '|---|---:|---:|---:|---:|\n'
  for spec in $algs; do
    speed_spec "$spec"
    for bytes in $sizes; do
      base=() ours=()
      for ((r = 0; r < runs; r++)); do
        base+=("$(speed_bps default "$alg" "$bytes" "$seconds" "${flags[@]}")")
        ours+=("$(speed_bps "$second" "$alg" "$bytes" "$seconds" "${flags[@]}")")
      done
      b=$(printf '%s\n' "${base[@]}" | median)
      o=$(printf '%s\n' "${ours[@]}" | median)
      awk -v s="$spec" -v n="$bytes" -v b="$b" -v o="$o" 'BEGIN {
        printf "| %s | %d | %.0f | %.0f | %.2f |\n", s, n, b / 1e6, o / 1e6, o / b }'
    done
  done
  echo
  update_algs=$(printf '%s\n' $algs | grep -v gcm | paste -sd, -)
  if [ -n "$update_algs" ] && [ -z "${BENCH_SELF:-}" ]; then
    "$bench_dir/bench/provider/update_bench" --algs "$update_algs" \
      --sizes "$(printf '%s\n' $sizes | paste -sd, -)" \
      ${AESMUX_KERNELS:+--kernels "$AESMUX_KERNELS"}
    echo
  fi
done
