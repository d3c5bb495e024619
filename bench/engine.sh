#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# The ENGINE against the provider (BENCHMARKS.md, "What does it change end
# to end?"): openssl speed with `-engine aesmux` and with the aesmux
# provider, side by side in alternating runs, median of several runs per
# cell, ratio ENGINE / provider. Specs ending in -decrypt time decryption; -noevp the old form
# without -evp (`openssl speed -engine aesmux aes-128-cbc`); -async16 runs
# 16 ASYNC jobs (multi-buffer CBC encryption).
#
# usage: bench/engine.sh [RUNS] [SECONDS]   (defaults: 5 runs of 1 s)
# Environment: BENCH_ALGS, BENCH_SIZES as for bench/speed.sh.
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

runs=${1:-5}
seconds=${2:-1}
algs=${BENCH_ALGS:-"aes-128-ecb aes-128-cbc aes-128-cbc-decrypt aes-128-ctr \
aes-128-xts aes-128-gcm aes-256-gcm aes-128-cbc-noevp"}
sizes=${BENCH_SIZES:-"16 256 1024 16384"}

install_deps
build >/dev/null

# side_bps engine|provider SPEC BYTES: bytes per second of one run.
side_bps() {
  local side=$1 spec=$2 bytes=$3 alg=$2 flags=(-evp)
  case $spec in
    *-decrypt) alg=${spec%-decrypt} flags=(-decrypt -evp) ;;
    *-noevp) alg=${spec%-noevp} flags=() ;;
    *-async16) alg=${spec%-async16} flags=(-async_jobs 16 -evp) ;;
  esac
  local args=(-engine aesmux)
  if [ "$side" = provider ]; then
    args=(-provider-path "$AESMUX_BUILD/provider" -provider aesmux
          -provider default -propquery provider=aesmux)
  fi
  OPENSSL_CONF=/dev/null OPENSSL_ENGINES=$AESMUX_BUILD/engine_compat \
    openssl speed "${args[@]}" -bytes "$bytes" -seconds "$seconds" -mr \
    "${flags[@]}" "$alg" 2>/dev/null | awk -F: '/^\+F:/ { print $4 }' |
    tail -n 1
}

bench_header
echo "# openssl speed, ${seconds}s per run, median of $runs alternating runs"
echo
printf '| algorithm | bytes | provider MB/s | ENGINE MB/s | ENGINE / provider |\n'
printf '|---|---:|---:|---:|---:|\n'
for spec in $algs; do
  for bytes in $sizes; do
    provider=() engine=()
    for ((r = 0; r < runs; r++)); do
      provider+=("$(side_bps provider "$spec" "$bytes")")
      engine+=("$(side_bps engine "$spec" "$bytes")")
    done
    p=$(printf '%s\n' "${provider[@]}" | median)
    e=$(printf '%s\n' "${engine[@]}" | median)
    awk -v s="$spec" -v n="$bytes" -v p="$p" -v e="$e" 'BEGIN {
      printf "| %s | %d | %.0f | %.0f | %.2f |\n", s, n, p / 1e6, e / 1e6, e / p }'
  done
done
