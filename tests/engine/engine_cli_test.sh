#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# The ENGINE aesmux from the openssl command line, found by id as when
# installed (OPENSSL_ENGINES points at the build tree) and with no aesmux
# provider anywhere, so that every request in aesmux's statistics was
# served by the ENGINE:
#   - `openssl engine` lists it, its ciphers and its control commands;
#     -pre settings are applied, bad ones and misspelt commands refused;
#   - `openssl enc -engine aesmux` agrees with OpenSSL byte for byte;
#   - `openssl speed -engine aesmux -evp` for CBC, GCM, CTR, XTS and the old
#     form without -evp (the command whose results an earlier AF_ALG engine
#     silently took from OpenSSL's own code): the statistics hold every
#     byte speed reports;
#   - openssl.cnf's engine section with default_algorithms = CIPHERS makes
#     programs use it without -engine, with its settings;
#   - s_server and s_client, both with -engine aesmux, over the TLS suites
#     on AES: the records went through the ENGINE on both sides.
#
# usage: engine_cli_test.sh BUILD_DIR
BUILD=$1
source "$(dirname "$0")/../integration/lib.sh"
require openssl python3

ENGINE_MODULE=$BUILD/engine_compat/aesmux.so
export OPENSSL_ENGINES=$BUILD/engine_compat
export OPENSSL_CONF=$DEFAULT_CONFIG
unset "${!AESMUX_@}"

# 1. Listed by id, with its ciphers and commands; -pre settings applied.
out=$(openssl engine -t -c -vvv aesmux 2>&1 || true)
if grep -q '\[ available \]' <<<"$out" && grep -q 'id-aes256-GCM' <<<"$out" &&
   grep -q 'AES-128-XTS' <<<"$out" && grep -q '^ *KERNELS:' <<<"$out" &&
   grep -q '^ *DUMP_STATS:' <<<"$out"; then
  pass "openssl engine lists aesmux, its ciphers and commands"
else
  fail "openssl engine -t -c -vvv aesmux: $out"
fi
out=$(openssl engine -pre KERNELS:bogus -t aesmux 2>&1 || true)
grep -q "kernels = 'bogus'" <<<"$out" && pass "a bad -pre setting is refused, naming it" ||
  fail "KERNELS:bogus: $out"
out=$(openssl engine -pre KERNALS:aesni -t aesmux 2>&1 || true)
grep -q "aesmux: warning: ENGINE: 'KERNALS' is not a control command of aesmux (did you mean 'KERNELS'?)" <<<"$out" &&
  pass "a misspelt -pre command is named with the nearest one" ||
  fail "KERNALS:aesni: $out"
out=$(openssl engine -pre KERNELS:none -t -post DUMP_STATS aesmux 2>&1 || true)
grep -q '^algorithm    path          requests            bytes   share$' <<<"$out" &&
  grep -q '^(no requests)$' <<<"$out" && grep -q '^afalg gcm: ' <<<"$out" &&
  pass "DUMP_STATS prints the statistics as aesmux stats does" ||
  fail "DUMP_STATS: $out"

# 2. openssl enc: the same bytes as OpenSSL's, both ways, served by the
# ENGINE (enc takes neither AEAD nor XTS).
key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
iv=0f0e0d0c0b0a09080706050403020100
make_payload "$WORK/plain" 1
for alg in aes-128-ecb aes-192-cbc aes-256-cbc aes-128-ctr aes-256-ctr; do
  klen=$((${alg:4:3} / 4))
  args=(-"$alg" -K "${key:0:$klen}")
  [ "${alg: -3}" = ecb ] || args+=(-iv "$iv")
  stats=$WORK/enc-$alg
  AESMUX_STATS_FILE=$stats openssl enc -engine aesmux "${args[@]}" \
    -in "$WORK/plain" -out "$WORK/ours" 2>/dev/null
  openssl enc "${args[@]}" -in "$WORK/plain" -out "$WORK/theirs"
  AESMUX_STATS_FILE=$stats-d openssl enc -d -engine aesmux "${args[@]}" \
    -in "$WORK/theirs" -out "$WORK/back" 2>/dev/null
  if cmp -s "$WORK/ours" "$WORK/theirs" && cmp -s "$WORK/back" "$WORK/plain"; then
    pass "enc -engine aesmux $alg agrees with OpenSSL, both ways"
  else
    fail "enc -engine aesmux $alg differs from OpenSSL"
  fi
  name=$(tr a-z A-Z <<<"$alg")
  expect_served "enc $alg" "$stats" "$name" simd 1048576
  expect_served "enc -d $alg" "$stats-d" "$name" simd 1048576
done

# 3. openssl speed: every byte speed reports went through the ENGINE.
# speed_served LABEL STATS_PREFIX ALGORITHM speed-arguments...
speed_served() {
  local label=$1 prefix=$2 algorithm=$3 count requests bytes want
  shift 3
  # speed -mr prints its counts (+R:<count>:...) on stderr.
  count=$(AESMUX_STATS_FILE=$prefix openssl speed -mr -engine aesmux \
            -seconds 1 -bytes 16384 "$@" 2>&1 |
          awk -F: '/^\+R:/ { print $2 }')
  read -r requests bytes < <(served "$prefix" "$algorithm" |
                             awk '{ r += $2; b += $3 } END { printf "%.0f %.0f\n", r, b }')
  want=$((${count:-0} * 16384))
  if [ "${count:-0}" -gt 0 ] && [ "$bytes" -ge "$want" ]; then
    pass "$label: $count x 16 KiB reported, $bytes bytes served by the ENGINE"
  else
    fail "$label: speed reported ${count:-no} x 16 KiB, the ENGINE served $bytes bytes of $algorithm"
  fi
}
speed_served "speed -evp aes-128-cbc" "$WORK/speed-cbc" AES-128-CBC -evp aes-128-cbc
speed_served "speed -evp aes-128-gcm" "$WORK/speed-gcm" AES-128-GCM -evp aes-128-gcm
speed_served "speed -evp aes-256-ctr" "$WORK/speed-ctr" AES-256-CTR -evp aes-256-ctr
speed_served "speed -evp aes-128-xts" "$WORK/speed-xts" AES-128-XTS -evp aes-128-xts
speed_served "speed aes-128-cbc (no -evp)" "$WORK/speed-old" AES-128-CBC aes-128-cbc

# 4. openssl.cnf: the engine section's commands and default_algorithms.
cat >"$WORK/engine.cnf" <<CNF
openssl_conf = openssl_init
[openssl_init]
engines = engine_section
[engine_section]
aesmux = aesmux_section
[aesmux_section]
dynamic_path = $ENGINE_MODULE
KERNELS = none
STATS_FILE = $WORK/cnf
default_algorithms = CIPHERS
CNF
OPENSSL_CONF=$WORK/engine.cnf openssl enc -aes-128-cbc -K "${key:0:32}" -iv "$iv" \
  -in "$WORK/plain" -out "$WORK/ours"
openssl enc -aes-128-cbc -K "${key:0:32}" -iv "$iv" -in "$WORK/plain" -out "$WORK/theirs"
cmp -s "$WORK/ours" "$WORK/theirs" && pass "openssl.cnf engine: enc agrees" ||
  fail "openssl.cnf engine: enc differs"
if grep -q '^AES-128-CBC fallback [1-9]' "$WORK"/cnf.* 2>/dev/null; then
  pass "openssl.cnf engine: enc used it without -engine, with KERNELS = none"
else
  fail "openssl.cnf engine: $(cat "$WORK"/cnf.* 2>/dev/null | grep -v ' 0 0$' || echo no statistics)"
fi
# A misspelt command in the section: OpenSSL drops the error and the rest
# of the section (default_algorithms too) without config_diagnostics; the
# ENGINE says it on stderr.
sed 's/^KERNELS = none/KERNAL = none/' "$WORK/engine.cnf" >"$WORK/misspelt.cnf"
out=$(OPENSSL_CONF=$WORK/misspelt.cnf openssl enc -aes-128-cbc -K "${key:0:32}" \
        -iv "$iv" -in "$WORK/plain" -out /dev/null 2>&1) &&
  grep -q "'KERNAL' is not a control command of aesmux (did you mean 'KERNELS'?)" <<<"$out" &&
  pass "openssl.cnf engine: a misspelt command is named on stderr" ||
  fail "openssl.cnf engine, misspelt command: $out"

# 5. s_server and s_client, both with -engine aesmux.
make_certificate
mkdir -p "$WORK/www"
make_payload "$WORK/www/payload.bin" 2
expected=$(sha256 "$WORK/www/payload.bin")
suites=(
  "TLS_AES_128_GCM_SHA256|-tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256|AES-128-GCM"
  "TLS_AES_256_GCM_SHA384|-tls1_3 -ciphersuites TLS_AES_256_GCM_SHA384|AES-256-GCM"
  "ECDHE-RSA-AES128-GCM-SHA256|-tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256|AES-128-GCM"
  "ECDHE-RSA-AES256-GCM-SHA384|-tls1_2 -cipher ECDHE-RSA-AES256-GCM-SHA384|AES-256-GCM"
  "ECDHE-RSA-AES128-SHA256 (etm)|-tls1_2 -cipher ECDHE-RSA-AES128-SHA256|AES-128-CBC"
  "AES256-SHA (etm)|-tls1_2 -cipher AES256-SHA|AES-256-CBC"
  "AES256-SHA (no_etm)|-tls1_2 -cipher AES256-SHA -no_etm -no_ticket|-AES-256-CBC"
)
run=0
for entry in "${suites[@]}"; do
  IFS='|' read -r name flags algorithm <<<"$entry"
  run=$((run + 1))
  port=$(free_port)
  # shellcheck disable=SC2086
  (cd "$WORK/www" && AESMUX_STATS_FILE=$WORK/tls-$run-server exec openssl s_server \
     -engine aesmux -accept "127.0.0.1:$port" -cert "$WORK/cert.pem" \
     -key "$WORK/key.pem" -WWW -naccept 1 -quiet $flags) >"$WORK/server-$run.log" 2>&1 &
  server=$!
  SPAWNED+=("$server")
  wait_for_port "$port"
  # shellcheck disable=SC2086
  printf 'GET /payload.bin HTTP/1.0\r\n\r\n' |
    AESMUX_STATS_FILE=$WORK/tls-$run-client timeout 60 openssl s_client -engine aesmux \
      -connect "127.0.0.1:$port" -quiet -verify_quiet $flags \
      >"$WORK/response-$run" 2>"$WORK/client-$run.log" || true
  wait "$server" 2>/dev/null || true
  /usr/bin/python3 - "$WORK/response-$run" "$WORK/body-$run" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(data.split(b"\r\n\r\n", 1)[-1])
PY
  if [ "$(sha256 "$WORK/body-$run")" != "$expected" ]; then
    fail "$name: payload differs; client log: $(tail -3 "$WORK/client-$run.log")"
    continue
  fi
  pass "$name: 2 MiB transferred intact, -engine aesmux on both sides"
  for side in client server; do
    if [ "${algorithm:0:1}" = "-" ]; then
      expect_none "$name ($side)" "$WORK/tls-$run-$side" "${algorithm:1}"
    else
      expect_served "$name ($side)" "$WORK/tls-$run-$side" "$algorithm" simd 1048576
    fi
  done
done
finish
