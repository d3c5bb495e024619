#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Instructions per `openssl speed -evp` update, aesmux against OpenSSL's
# default provider: callgrind runs each side's `openssl speed` for one
# second with collection on only inside EVP_EncryptUpdate and
# EVP_DecryptUpdate (libcrypto's EVP layer, the provider's dispatch
# function and its kernel), and divides by the updates speed counted.
#
# Where a short update is bound by the AES latency chain (in place, each
# update's input is the last one's output) both sides run as fast as that
# chain on an idle core; once other work shares the core, an update costs
# what its instructions cost, so these counts decide the short cells of
# bench/speed.sh on a busy machine.
#
# valgrind runs no VAES or AVX-512: aesmux runs its aesni tier here, whose
# provider code the other tiers share (their one-block kernels have the
# same shape).
#
# usage: bench/update_cost.sh
# Environment: BENCH_ALGS (as bench/speed.sh; default ECB, CBC both ways,
#              CTR and XTS), BENCH_SIZES (default "16 64 256"),
#              BENCH_SERIES (default 3.0; 3.5 and 3.6 as bench/speed.sh).
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

algs=${BENCH_ALGS:-"aes-128-ecb aes-128-cbc aes-128-cbc-decrypt aes-128-ctr aes-128-xts"}
sizes=${BENCH_SIZES:-"16 64 256"}

install_deps valgrind dpkg-dev perl

# update_instructions PROVIDER ALG BYTES [speed flags...]: instructions
# per update.
update_instructions() {
  local provider=$1 alg=$2 bytes=$3 out
  shift 3
  local args=(-provider default -propquery provider=default)
  if [ "$provider" = aesmux ]; then
    args=(-provider-path "$bench_dir/provider" -provider aesmux
          -provider default -propquery provider=aesmux)
  fi
  out=$(mktemp)
  OPENSSL_CONF=/dev/null AESMUX_KERNELS=aesni valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null --toggle-collect=EVP_EncryptUpdate \
    --toggle-collect=EVP_DecryptUpdate "$bench_openssl" speed "${args[@]}" \
    -evp "$alg" -bytes "$bytes" -seconds 1 -mr "$@" >"$out" 2>&1 || true
  awk -F'[:]' '
    /^\+R:/ { updates = $2 }
    /Collected :/ { gsub(/[^0-9]/, "", $NF); collected = $NF }
    END {
      if (updates > 0 && collected > 0) printf "%.0f\n", collected / updates
      else print "?"
    }' "$out"
  rm -f "$out"
}

for series in ${BENCH_SERIES:-3.0}; do
  bench_build "$series" bench -- aesmux aesmux-cli
  AESMUX_KERNELS=aesni bench_header
  echo "# instructions per openssl speed -evp update (callgrind; aesmux on aesni)"
  echo
  printf '| algorithm | bytes | default | aesmux | aesmux / default |\n'
  printf '|---|---:|---:|---:|---:|\n'
  for spec in $algs; do
    speed_spec "$spec"
    for bytes in $sizes; do
      base=$(update_instructions default "$alg" "$bytes" "${flags[@]}")
      ours=$(update_instructions aesmux "$alg" "$bytes" "${flags[@]}")
      awk -v s="$spec" -v n="$bytes" -v b="$base" -v o="$ours" 'BEGIN {
        r = (b + 0 > 0 && o + 0 > 0) ? sprintf("%.2f", o / b) : "?"
        printf "| %s | %d | %s | %s | %s |\n", s, n, b, o, r }'
    done
  done
  echo
done
