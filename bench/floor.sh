#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Regenerates the per-record floor tables of BENCHMARKS.md on each OpenSSL
# series side by side: evp_floor_bench's ns per AES-128-GCM record
# (BoringSSL, libcrypto with a provider that does nothing, the least-glue
# provider, aesmux, the default provider) and floor_cost.py's instructions
# per record, aesmux built against each series' headers and run on its
# libcrypto. 3.0 is the system's; 3.5 and 3.6 are built from Debian's
# sources as for their test stages (scripts/openssl-build.sh).
#
# usage: bench/floor.sh [RUNS]   (default 7; about half a minute per
#                                 series once built)
# Environment: BENCH_BORINGSSL_DIR (required: a BoringSSL tree with its
#              crypto target built in build/, DEVELOPERS.md),
#              BENCH_SERIES (default "3.0 3.5 3.6"), BENCH_TIER (default
#              vaes_avx512, the widest), BENCH_SIZES (16,256,1344,8192,16384),
#              BENCH_COUNT_SIZES (16,256,1344: the instruction counts).
# Wants a quiet machine for the times; the counts do not depend on load.
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

runs=${1:-7}
boringssl=${BENCH_BORINGSSL_DIR:?set BENCH_BORINGSSL_DIR to a BoringSSL tree (DEVELOPERS.md)}
tier=${BENCH_TIER:-vaes_avx512}
sizes=${BENCH_SIZES:-16,256,1344,8192,16384}
count_sizes=${BENCH_COUNT_SIZES:-16,256,1344}

install_deps valgrind python3 dpkg-dev perl

for series in ${BENCH_SERIES:-3.0 3.5 3.6}; do
  bench_build "$series" peer -DAESMUX_BORINGSSL_DIR="$boringssl" -- \
    aesmux aesmux-cli evp_floor_bench
  bench_header
  taskset -c 1 "$bench_dir/bench/peer/evp_floor_bench" --tier "$tier" \
    --runs "$runs" --sizes "$sizes" --key-bits 128
  python3 "$AESMUX_ROOT/bench/peer/floor_cost.py" --build "$bench_dir" \
    --bytes "$count_sizes"
  echo
done
