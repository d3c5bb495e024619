#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# nginx (2 worker processes) with aesmux enabled through OPENSSL_CONF serves
# a multi-MiB file over each AES suite to curl, and to Python's ssl module
# (itself on aesmux); every download's sha256 must match, and the worker
# processes' statistics must show aesmux served the suite's algorithm on the
# paths its profile (lib.sh) implies.
#
# usage: nginx_test.sh BUILD_DIR
BUILD=$1
source "$(dirname "$0")/lib.sh"
require nginx curl python3

make_certificate
mkdir -p "$WORK/www"
make_payload "$WORK/www/payload.bin" 4
expected=$(sha256 "$WORK/www/payload.bin")
# Workers run as nobody: they must be able to write their statistics.
mkdir -m 1777 "$WORK/stats"

# Starts nginx on PORT with aesmux under PROFILE writing to STATS_PREFIX;
# EXTRA is a directive for the server block.
# start_nginx PORT STATS_PREFIX PROFILE [EXTRA]
start_nginx() {
  local port=$1 stats=$2 profile=$3 extra=${4:-}
  aesmux_config "$WORK/nginx-openssl.cnf" "$stats" "$profile"
  cat >"$WORK/nginx.conf" <<CONF
worker_processes 2;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log info;
events { worker_connections 64; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $WORK/cert.pem;
    ssl_certificate_key $WORK/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-SHA256:AES256-SHA;
    $extra
    root $WORK/www;
  }
}
CONF
  OPENSSL_CONF=$WORK/nginx-openssl.cnf nginx -c "$WORK/nginx.conf"
  wait_for_port "$port"
}

# Stops nginx gracefully and waits for its processes to exit (and write
# their statistics).
stop_nginx() {
  local master i
  master=$(cat "$WORK/nginx.pid")
  nginx -c "$WORK/nginx.conf" -s quit
  for ((i = 0; i < 100; i++)); do
    pgrep -P "$master" >/dev/null || kill -0 "$master" 2>/dev/null || return 0
    sleep 0.1
  done
}

# suite | curl flags | nginx directive | aesmux algorithm ("-": records go
# to the default provider's stitched AES-CBC-HMAC, as documented; those rows
# turn session tickets off, whose keys are AES-CBC too)
suites=(
  "TLS_AES_128_GCM_SHA256|--tlsv1.3 --tls13-ciphers TLS_AES_128_GCM_SHA256||AES-128-GCM"
  "TLS_AES_256_GCM_SHA384|--tlsv1.3 --tls13-ciphers TLS_AES_256_GCM_SHA384||AES-256-GCM"
  "ECDHE-RSA-AES128-GCM-SHA256|--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-RSA-AES128-GCM-SHA256||AES-128-GCM"
  "ECDHE-RSA-AES256-GCM-SHA384|--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-RSA-AES256-GCM-SHA384||AES-256-GCM"
  "ECDHE-RSA-AES128-SHA256 (etm)|--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-RSA-AES128-SHA256||AES-128-CBC"
  "ECDHE-RSA-AES128-SHA256 (no_etm)|--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-RSA-AES128-SHA256|ssl_conf_command Options -EncryptThenMac; ssl_session_tickets off;|-AES-128-CBC"
  "AES256-SHA (etm)|--tlsv1.2 --tls-max 1.2 --ciphers AES256-SHA||AES-256-CBC"
  "AES256-SHA (no_etm)|--tlsv1.2 --tls-max 1.2 --ciphers AES256-SHA|ssl_conf_command Options -EncryptThenMac; ssl_session_tickets off;|-AES-256-CBC"
)

run=0
for entry in "${suites[@]}"; do
  IFS='|' read -r name flags directive algorithm <<<"$entry"
  run=$((run + 1))
  port=$(free_port)
  stats=$WORK/stats/nginx-$run
  start_nginx "$port" "$stats" simd "$directive"
  # Two downloads, so both workers are likely to take part.
  ok=1
  for i in 1 2; do
    # shellcheck disable=SC2086
    if ! OPENSSL_CONF=$DEFAULT_CONFIG curl -sS --fail --cacert "$WORK/cert.pem" \
           $flags -o "$WORK/download" "https://127.0.0.1:$port/payload.bin" ||
       [ "$(sha256 "$WORK/download")" != "$expected" ]; then
      ok=0
    fi
  done
  stop_nginx
  # At most a file per worker, the summary of those that have exited and
  # the lock folds take: the master serves no request, and writes none.
  files=$(compgen -G "$stats.*" | wc -l || true)
  [ "$files" -le 4 ] ||
    fail "nginx $name: $files statistics files, expected at most 2 workers', a summary and a lock"
  if [ "$ok" -eq 1 ]; then
    pass "nginx $name: 2 downloads of 4 MiB, sha256 matches"
  else
    fail "nginx $name: download failed or differs; $(tail -2 "$WORK/nginx-error.log")"
    continue
  fi
  if [ "${algorithm:0:1}" = "-" ]; then
    expect_none "nginx $name" "$stats" "${algorithm:1}" "$WORK/nginx-openssl.cnf"
  else
    expect_served "nginx $name" "$stats" "$algorithm" simd $((8 * 1048576))
  fi
done

# Python's ssl module, with aesmux on the Python side (fallback path),
# fetching from nginx (small records on the fallback path, full ones on the
# kernels).
port=$(free_port)
start_nginx "$port" "$WORK/stats/nginx-python" mixed
aesmux_config "$WORK/python-openssl.cnf" "$WORK/stats/python" fallback
OPENSSL_CONF=$WORK/python-openssl.cnf /usr/bin/python3 - \
  "https://localhost:$port/payload.bin" "$WORK/cert.pem" "$WORK/python-download" <<'PY'
import ssl, sys, urllib.request
url, cafile, out = sys.argv[1:]
context = ssl.create_default_context(cafile=cafile)
with urllib.request.urlopen(url, context=context) as response:
    open(out, "wb").write(response.read())
print("python:", ssl.OPENSSL_VERSION)
PY
stop_nginx
if [ "$(sha256 "$WORK/python-download")" = "$expected" ]; then
  pass "python ssl: 4 MiB from nginx, sha256 matches"
else
  fail "python ssl: download differs"
fi
# TLS 1.3 between OpenSSL peers negotiates TLS_AES_256_GCM_SHA384.
expect_served "python ssl (python)" "$WORK/stats/python" AES-256-GCM fallback \
  $((4 * 1048576))
expect_served "python ssl (nginx)" "$WORK/stats/nginx-python" AES-256-GCM mixed \
  $((4 * 1048576))

finish
