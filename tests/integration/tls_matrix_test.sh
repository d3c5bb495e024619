#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# openssl s_server / s_client over loopback, each TLS suite libssl can put on
# AES, with aesmux on the client only, on the server only and on both, each
# side under an aesmux profile (lib.sh: simd, fallback, mixed). Each run
# moves 2 MiB from server to client (s_server -WWW), compares bytes, and
# checks aesmux's statistics: the side(s) running aesmux must show the
# suite's AES algorithm served on the paths their profile implies. Control
# runs first show that without aesmux no AES suite can be negotiated.
#
# usage: tls_matrix_test.sh BUILD_DIR
BUILD=$1
source "$(dirname "$0")/lib.sh"
require openssl python3

make_certificate
mkdir -p "$WORK/www"
make_payload "$WORK/www/payload.bin" 2
expected=$(sha256 "$WORK/www/payload.bin")

run=0
# One transfer: transfer SERVER_CNF CLIENT_CNF FLAGS. Returns 0 when the
# 2 MiB arrived intact; the logs are $WORK/{server,client}-$run.log.
transfer() {
  local server_cnf=$1 client_cnf=$2 flags=$3 port server i
  run=$((run + 1))
  port=$(free_port)
  # shellcheck disable=SC2086
  (cd "$WORK/www" && OPENSSL_CONF=$server_cnf exec openssl s_server \
     -accept "127.0.0.1:$port" -cert "$WORK/cert.pem" -key "$WORK/key.pem" \
     -WWW -naccept 1 -quiet $flags) >"$WORK/server-$run.log" 2>&1 &
  server=$!
  SPAWNED+=("$server")
  wait_for_port "$port" "$server" || true
  # shellcheck disable=SC2086
  printf 'GET /payload.bin HTTP/1.0\r\n\r\n' |
    OPENSSL_CONF=$client_cnf timeout 60 openssl s_client \
      -connect "127.0.0.1:$port" -quiet -verify_quiet $flags \
      >"$WORK/response-$run" 2>"$WORK/client-$run.log" || true
  # A server whose client gave up before its handshake waits for another.
  for ((i = 0; i < 50; i++)); do
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  # The body follows the HTTP header.
  /usr/bin/python3 - "$WORK/response-$run" "$WORK/body-$run" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(data.split(b"\r\n\r\n", 1)[-1])
PY
  [ "$(sha256 "$WORK/body-$run")" = "$expected" ]
}

# Controls. Without aesmux (default_except only) libssl offers no suite on
# the ciphers aesmux serves (AES-GCM, AES-CBC; AES-CCM stays, aesmux does
# not serve it); with aesmux it offers them. A TLS 1.3 server without
# aesmux then fails the handshake for an AES suite and completes it for
# ChaCha20 (so the refusal is about AES, not a broken configuration;
# without session tickets, whose keys are AES-CBC).
aes_suites() {
  OPENSSL_CONF=$1 openssl ciphers -s -v ALL 2>/dev/null |
    awk '$5 ~ /^Enc=AES(GCM)?\(/ { n++ } END { print n + 0 }'
}
no_aesmux_config "$WORK/no-aesmux.cnf"
aesmux_config "$WORK/aesmux.cnf" "$WORK/stats-control" simd
without=$(aes_suites "$WORK/no-aesmux.cnf")
with=$(aes_suites "$WORK/aesmux.cnf")
if [ "$without" -eq 0 ] && [ "$with" -gt 0 ]; then
  pass "libssl offers $with AES-GCM/AES-CBC suites with aesmux and none without"
else
  fail "libssl offers $with AES-GCM/AES-CBC suites with aesmux and $without without (want none)"
fi
if transfer "$WORK/no-aesmux.cnf" "$DEFAULT_CONFIG" \
     "-tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256 -no_ticket"; then
  fail "without aesmux, TLS_AES_128_GCM_SHA256 was negotiated: AES came from elsewhere"
else
  pass "without aesmux, TLS_AES_128_GCM_SHA256 cannot be negotiated"
fi
if transfer "$WORK/no-aesmux.cnf" "$DEFAULT_CONFIG" \
     "-tls1_3 -ciphersuites TLS_CHACHA20_POLY1305_SHA256 -no_ticket"; then
  pass "without aesmux, TLS_CHACHA20_POLY1305_SHA256: 2 MiB transferred intact"
else
  fail "without aesmux, TLS_CHACHA20_POLY1305_SHA256 failed: $(tail -2 "$WORK/client-$run.log")"
fi

# suite | protocol flags | aesmux algorithm expected on the record layer
# ("-" where libssl uses the default provider's stitched AES-CBC-HMAC; those
# rows turn session tickets off, which are AES-CBC too) | ciphers also
# left out of default_except (without the stitched cipher, libssl runs
# MAC-then-encrypt on aesmux's AES-CBC with its TLS record mode)
suites=(
  "TLS_AES_128_GCM_SHA256|-tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256|AES-128-GCM|"
  "TLS_AES_256_GCM_SHA384|-tls1_3 -ciphersuites TLS_AES_256_GCM_SHA384|AES-256-GCM|"
  "ECDHE-RSA-AES128-GCM-SHA256|-tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256|AES-128-GCM|"
  "ECDHE-RSA-AES256-GCM-SHA384|-tls1_2 -cipher ECDHE-RSA-AES256-GCM-SHA384|AES-256-GCM|"
  "ECDHE-RSA-AES128-SHA256 (etm)|-tls1_2 -cipher ECDHE-RSA-AES128-SHA256|AES-128-CBC|"
  "ECDHE-RSA-AES128-SHA256 (no_etm)|-tls1_2 -cipher ECDHE-RSA-AES128-SHA256 -no_etm -no_ticket|-AES-128-CBC|"
  "ECDHE-RSA-AES128-SHA256 (no_etm, no stitched cipher)|-tls1_2 -cipher ECDHE-RSA-AES128-SHA256 -no_etm|AES-128-CBC|AES-128-CBC-HMAC-SHA256"
  "AES256-SHA (etm)|-tls1_2 -cipher AES256-SHA|AES-256-CBC|"
  "AES256-SHA (no_etm)|-tls1_2 -cipher AES256-SHA -no_etm -no_ticket|-AES-256-CBC|"
  "AES256-SHA (no_etm, no stitched cipher)|-tls1_2 -cipher AES256-SHA -no_etm|AES-256-CBC|AES-256-CBC-HMAC-SHA1"
)

# placement | client profile | server profile ("-": no aesmux there)
placements=("client|simd|-" "server|-|mixed" "both|fallback|simd")

for entry in "${suites[@]}"; do
  IFS='|' read -r name flags algorithm extra_except <<<"$entry"
  for placement_entry in "${placements[@]}"; do
    IFS='|' read -r placement client_profile server_profile <<<"$placement_entry"
    label="$name, aesmux on $placement"
    declare -A profile=([client]=$client_profile [server]=$server_profile)
    declare -A cnf=([client]=$DEFAULT_CONFIG [server]=$DEFAULT_CONFIG)
    for side in client server; do
      [ "${profile[$side]}" != - ] || continue
      cnf[$side]=$WORK/$side-$((run + 1)).cnf
      aesmux_config "${cnf[$side]}" "$WORK/stats-$((run + 1))-$side" \
        "${profile[$side]}" "$extra_except"
    done
    if transfer "${cnf[server]}" "${cnf[client]}" "$flags"; then
      pass "$label: 2 MiB transferred intact"
    else
      fail "$label: payload differs ($(stat -c %s "$WORK/body-$run") bytes); client log: $(tail -3 "$WORK/client-$run.log")"
      continue
    fi
    for side in client server; do
      [ "${profile[$side]}" != - ] || continue
      prefix=$WORK/stats-$run-$side
      if [ "${algorithm:0:1}" = "-" ]; then
        expect_none "$label ($side)" "$prefix" "${algorithm:1}" "${cnf[$side]}"
      else
        expect_served "$label ($side, ${profile[$side]})" "$prefix" \
          "$algorithm" "${profile[$side]}" 1048576
      fi
    done
  done
done
finish
