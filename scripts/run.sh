#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# The main job: installs what is missing, builds aesmux, loads it into
# OpenSSL and shows it working and its speed next to the default provider.
set -euo pipefail
source "$(dirname "$0")/common.sh"

install_deps
build

cnf=$(write_test_config "stats_file = $AESMUX_BUILD/run-stats")
export OPENSSL_CONF=$cnf
rm -f "$AESMUX_BUILD"/run-stats.*

log "OpenSSL loads aesmux ($cnf)"
openssl list -providers | sed -n '/aesmux/,/status/p'
"$AESMUX_BUILD/provider/aesmux" info

log "aesmux agrees with the default provider (openssl enc, 1 MiB)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -c 1048576 /dev/urandom >"$work/plain"
key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
iv=0f0e0d0c0b0a09080706050403020100
for alg in aes-128-cbc aes-256-cbc aes-128-ctr aes-256-ctr; do
  klen=$(( ${alg:4:3} / 4 ))
  openssl enc -"$alg" -K "${key:0:$klen}" -iv "$iv" -propquery provider=aesmux \
    -in "$work/plain" -out "$work/ours"
  OPENSSL_CONF=/dev/null openssl enc -"$alg" -K "${key:0:$klen}" -iv "$iv" \
    -in "$work/plain" -out "$work/theirs"
  openssl enc -d -"$alg" -K "${key:0:$klen}" -iv "$iv" \
    -propquery provider=aesmux -in "$work/ours" -out "$work/back"
  if cmp -s "$work/ours" "$work/theirs" && cmp -s "$work/back" "$work/plain"; then
    echo "  $alg: identical ciphertext, round trip ok"
  else
    echo "  $alg: MISMATCH" >&2
    exit 1
  fi
done

log "speed at 16 KiB, openssl speed -evp, default provider vs aesmux (1 s each)"
printf '  %-28s %12s %12s %7s\n' algorithm "default MB/s" "aesmux MB/s" ratio
for spec in aes-128-ecb aes-128-cbc "aes-128-cbc -decrypt" \
            "aes-128-cbc -async_jobs 16" aes-128-ctr aes-256-ctr aes-128-xts \
            aes-256-xts aes-128-gcm aes-256-gcm; do
  read -r alg flags <<<"$spec"
  # shellcheck disable=SC2086
  base=$(speed_bps default "$alg" 16384 1 $flags)
  # shellcheck disable=SC2086
  ours=$(speed_bps aesmux "$alg" 16384 1 $flags)
  awk -v n="$alg${flags:+ $flags}" -v b="$base" -v o="$ours" 'BEGIN {
    printf "  %-28s %12.0f %12.0f %6.2fx\n", n, b / 1e6, o / 1e6, o / b }'
done
echo "  (one run each on a shared machine; BENCHMARKS.md has medians)"

log "where the work went (statistics of the processes above)"
"$AESMUX_BUILD/provider/aesmux" stats "$AESMUX_BUILD/run-stats"
