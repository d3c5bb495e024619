#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# The openssl command line with aesmux loaded through openssl.cnf, as a user
# would run it: the provider is listed, `openssl enc` agrees with the default
# provider byte for byte, `openssl speed` runs every algorithm, the
# statistics file shows aesmux did the work, and a bad setting is reported.
#
# usage: openssl_cli_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
module=$build/provider/aesmux.so
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

config() {  # config FILE [aesmux section lines...]
  local file=$1
  shift
  {
    # (A section may not be called "default": that name is the top level.)
    [ -z "${DIAGNOSTICS:-}" ] || printf 'config_diagnostics = 1\n'
    printf 'openssl_conf = init\n[init]\nproviders = providers\n'
    printf 'alg_section = evp\n[providers]\ndefault = default_sect\n'
    printf 'aesmux = aesmux_sect\n[default_sect]\nactivate = 1\n'
    printf '[aesmux_sect]\n'
    printf 'module = %s\nactivate = 1\n' "$module"
    local line
    for line in "$@"; do printf '%s\n' "$line"; done
    printf '[evp]\ndefault_properties = ?provider=aesmux\n'
  } >"$file"
}

config "$work/aesmux.cnf"
export OPENSSL_CONF=$work/aesmux.cnf

# 0. The module exports exactly one symbol.
exported=$(nm -D --defined-only "$module" | awk '{ print $3 }' | tr '\n' ' ')
[ "$exported" = "OSSL_provider_init " ] && pass "exports only OSSL_provider_init" ||
  fail "aesmux.so exports: $exported"

# 1. Listed, with every algorithm.
count=$(openssl list -cipher-algorithms | grep -c '@ aesmux' || true)
[ "$count" -eq 14 ] && pass "14 algorithms listed" ||
  fail "expected 14 aesmux algorithms, saw $count"
openssl list -providers | grep -q 'aesmux AES provider' &&
  pass "provider listed" || fail "provider not listed"

# 2. openssl enc through aesmux equals the default provider, both ways.
failures_before=$failures
key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
iv=0f0e0d0c0b0a09080706050403020100
for size in 0 1 15 16 17 4095 65536 1048577; do
  head -c "$size" /dev/urandom >"$work/plain"
  for alg in aes-128-ecb aes-192-cbc aes-256-cbc aes-128-ctr aes-256-ctr; do
    klen=$(( ${alg:4:3} / 4 ))
    args=(-"$alg" -K "${key:0:$klen}")
    [ "${alg: -3}" = ecb ] || args+=(-iv "$iv")
    openssl enc "${args[@]}" -propquery provider=aesmux \
      -in "$work/plain" -out "$work/ours"
    OPENSSL_CONF=/dev/null openssl enc "${args[@]}" \
      -in "$work/plain" -out "$work/theirs"
    openssl enc -d "${args[@]}" -propquery provider=aesmux \
      -in "$work/ours" -out "$work/back"
    if cmp -s "$work/ours" "$work/theirs" && cmp -s "$work/back" "$work/plain"
    then :; else fail "enc $alg $size bytes differs from the default provider"; fi
  done
done
[ "$failures" -eq "$failures_before" ] && pass "openssl enc round trips"

# 3. The statistics file of an enc process names aesmux's work.
AESMUX_STATS_FILE=$work/stats openssl enc -aes-128-cbc -K "${key:0:32}" \
  -iv "$iv" -propquery provider=aesmux -in "$work/plain" -out /dev/null
stats=$(cat "$work"/stats.*)
if echo "$stats" | awk '$1 == "AES-128-CBC" && $3 > 0 && $4 >= 1048577 { ok = 1 }
                        END { exit !ok }'; then
  pass "statistics file shows AES-128-CBC served"
else
  fail "statistics file: $stats"
fi

# 4. openssl speed runs every algorithm through aesmux (EVP_Cipher and EVP).
failures_before=$failures
for alg in aes-128-ecb aes-192-ecb aes-256-ecb aes-128-cbc aes-192-cbc \
           aes-256-cbc aes-128-ctr aes-192-ctr aes-256-ctr aes-128-xts \
           aes-256-xts aes-128-gcm aes-192-gcm aes-256-gcm; do
  if ! out=$(openssl speed -propquery provider=aesmux -evp "$alg" \
               -bytes 4096 -seconds 1 -mr 2>&1) ||
     ! echo "$out" | grep -q '^+F:'; then
    fail "speed -evp $alg: $out"
  fi
done
# Without -evp and -propquery: only openssl.cnf's preference sends it to
# aesmux, so the statistics must show that aesmux served it.
AESMUX_STATS_FILE=$work/speed-stats openssl speed -seconds 1 -bytes 1024 -mr \
  aes-128-cbc 2>&1 | grep -q '^+F:' ||
  fail "speed aes-128-cbc (EVP_Cipher path)"
awk '$1 == "AES-128-CBC" && $3 > 0 { ok = 1 } END { exit !ok }' \
    "$work"/speed-stats.* 2>/dev/null ||
  fail "speed aes-128-cbc: aesmux's statistics show no AES-128-CBC request"
[ "$failures" -eq "$failures_before" ] && pass "openssl speed"

# 5. A malformed setting keeps aesmux out and says why.
config "$work/bad.cnf" "ctr.fallback_max_len = 12 bytes"
out=$(OPENSSL_CONF=$work/bad.cnf openssl list -providers 2>&1 || true)
if echo "$out" | grep -q "aesmux: not loaded: ctr.fallback_max_len = '12 bytes'" &&
   ! echo "$out" | grep -q 'aesmux AES provider'; then
  pass "bad setting refused with a message"
else
  fail "bad setting: $out"
fi

# 5b. Every mistake, with and without config_diagnostics, through the real
# openssl command: printed; under config_diagnostics the program stops with
# status 1 and the reason (OpenSSL itself would run on without aesmux);
# without it, a value aesmux cannot use keeps aesmux out and the program
# runs on the default provider, a warning leaves aesmux in.
# mistake NAME "LINE" STDERR_TEXT LOADED_WITHOUT_DIAGNOSTICS [VAR=VALUE]
mistake() {
  local name=$1 line=$2 text=$3 loads=$4 envs=("${@:5}") out status
  for DIAGNOSTICS in "" 1; do
    config "$work/mistake.cnf" "$line"
    status=0
    out=$(env "${envs[@]}" OPENSSL_CONF=$work/mistake.cnf openssl enc \
            -aes-128-cbc -K "${key:0:32}" -iv "$iv" -in "$work/plain" \
            -out "$work/mistake.out" 2>&1) || status=$?
    if ! grep -qF "$text" <<<"$out"; then
      fail "$name${DIAGNOSTICS:+ (config_diagnostics)}: not reported: $out"
    elif [ -n "$DIAGNOSTICS" ]; then
      [ "$status" -eq 1 ] &&
        grep -q "^aesmux: stopping the program (exit status 1): config_diagnostics = 1 in $work/mistake.cnf" <<<"$out" &&
        pass "$name: config_diagnostics stops openssl enc with the reason" ||
        fail "$name (config_diagnostics): status $status: $out"
    elif [ "$status" -ne 0 ] || ! cmp -s "$work/mistake.out" "$work/ours"; then
      fail "$name: openssl enc failed (status $status): $out"
    else
      listed=$(env "${envs[@]}" OPENSSL_CONF=$work/mistake.cnf \
                 openssl list -providers 2>/dev/null | grep -c 'aesmux AES' || true)
      [ "$listed" -eq "$loads" ] &&
        pass "$name: reported; openssl enc runs on (aesmux loaded: $loads)" ||
        fail "$name: aesmux listed $listed times, expected $loads"
    fi
  done
  unset DIAGNOSTICS
}
openssl enc -aes-128-cbc -K "${key:0:32}" -iv "$iv" -in "$work/plain" \
  -out "$work/ours"
mistake "a bad value" "cbc.mb_min_len = lots" \
  "aesmux: not loaded: cbc.mb_min_len = 'lots': expected a byte count" 0
mistake "a bad value in the environment" "" \
  "aesmux: not loaded: AESMUX_KERNELS = 'fast': expected auto|none" 0 \
  AESMUX_KERNELS=fast
mistake "an unknown key" "kernals = aesni" \
  "aesmux: warning: $work/mistake.cnf [aesmux_sect]: unknown key 'kernals' (did you mean 'kernels'?): ignored" 1
mistake "an unknown variable" "" \
  "aesmux: warning: environment: 'AESMUX_KERNAL' is not a variable aesmux reads (did you mean 'AESMUX_KERNELS'?): ignored" 1 \
  AESMUX_KERNAL=aesni
mistake "a missing calibration file" "calibration_file = $work/none.conf" \
  "aesmux: warning: calibration_file = '$work/none.conf': cannot open: No such file or directory: the file is ignored" 1
# The off switch: under config_diagnostics with a bad value, aesmux loads,
# registers nothing, and the program runs on the default provider.
DIAGNOSTICS=1 config "$work/off.cnf" "cbc.mb_min_len = lots"
if out=$(AESMUX_DISABLE=1 OPENSSL_CONF=$work/off.cnf openssl list \
           -cipher-algorithms 2>&1) && ! grep -q '@ aesmux' <<<"$out" &&
   grep -q "ignored, aesmux is off" <<<"$out"; then
  pass "AESMUX_DISABLE=1: no algorithm of aesmux, the mistake only a warning"
else
  fail "AESMUX_DISABLE=1: $out"
fi

# 6. openssl.cnf.example works as documented (module found by bare name).
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
if OPENSSL_MODULES=$build/provider OPENSSL_CONF=$source_dir/openssl.cnf.example \
     openssl list -cipher-algorithms | grep -qi 'aes-256-gcm.*@ aesmux'; then
  pass "openssl.cnf.example loads aesmux"
else
  fail "openssl.cnf.example does not load aesmux"
fi

[ "$failures" -eq 0 ] && echo "all openssl CLI checks passed" || exit 1
