#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# The load benchmark of BENCHMARKS.md ("What does it change end to end?"):
# nginx (2 worker processes) serves a 1 MiB file over TLS 1.3 with
# TLS_AES_256_GCM_SHA384 on loopback to wrk (32 keep-alive connections),
# both processes loading the same openssl.cnf, in three configurations run
# in turn, RUNS times each:
#   default      OpenSSL's default provider only;
#   aesmux       aesmux, statistics off;
#   aesmux+stats aesmux with stats_file set (what docs/operating.md tells
#                operators to do to confirm aesmux is in use).
# Prints the median requests per second and CPU time per request (nginx's
# workers and wrk together) of each, and the ratios; checks
# from the statistics files that aesmux served AES-256-GCM in both nginx
# and wrk. A benchmark, not a test: the machine is shared, read medians.
#
# usage: bench/nginx.sh [RUNS] [SECONDS]   (defaults: 5 runs of 10 s)
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

runs=${1:-5}
seconds=${2:-10}
# The settings are this script's: no AESMUX_* from the caller.
while read -r name; do unset "$name"; done < <(env | sed -n 's/^\(AESMUX_[A-Z_]*\)=.*/\1/p')

install_deps nginx-light wrk
build >/dev/null

work=$(mktemp -d /tmp/aesmux-bench-nginx.XXXXXX)
chmod 755 "$work"
trap 'stop_nginx 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/www" "$work/tmp"
mkdir -m 1777 "$work/stats"
head -c 1048576 /dev/urandom >"$work/www/1m.bin"
chmod 644 "$work/www/1m.bin"
OPENSSL_CONF=/dev/null openssl req -x509 -newkey ec \
  -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
chmod 644 "$work/key.pem"

# openssl.cnf for each configuration.
printf 'openssl_conf = init\n[init]\nproviders = providers\n[providers]\n'\
'default = default_sect\n[default_sect]\nactivate = 1\n' >"$work/default.cnf"
aesmux_cnf() {  # aesmux_cnf FILE [section lines...]
  local file=$1 line
  shift
  {
    printf 'config_diagnostics = 1\nopenssl_conf = init\n[init]\n'
    printf 'providers = providers\nalg_section = evp\n[providers]\n'
    printf 'default = default_sect\naesmux = aesmux_sect\n[default_sect]\n'
    printf 'activate = 1\n[aesmux_sect]\nmodule = %s\nactivate = 1\n' \
      "$AESMUX_BUILD/provider/aesmux.so"
    for line in "$@"; do printf '%s\n' "$line"; done
    printf '[evp]\ndefault_properties = ?provider=aesmux\n'
  } >"$file"
}
aesmux_cnf "$work/aesmux.cnf"
aesmux_cnf "$work/aesmux+stats.cnf" "stats_file = $work/stats/s"

port=$(( 20000 + RANDOM % 20000 ))
cat >"$work/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $work/tmp;
  proxy_temp_path $work/tmp;
  fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp;
  scgi_temp_path $work/tmp;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
    ssl_conf_command Ciphersuites TLS_AES_256_GCM_SHA384;
    root $work/www;
  }
}
CONF

stop_nginx() {
  [ -f "$work/nginx.pid" ] || return 0
  local master i
  master=$(cat "$work/nginx.pid")
  nginx -c "$work/nginx.conf" -s quit 2>/dev/null || kill "$master" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$master" 2>/dev/null || break
    sleep 0.1
  done
  rm -f "$work/nginx.pid"
}

# CPU seconds (user + system) nginx's workers have used so far.
workers_cpu() {
  local master pid ticks=0
  master=$(cat "$work/nginx.pid")
  for pid in $(pgrep -P "$master"); do
    ticks=$((ticks + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
  done
  awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { print t / hz }'
}

# run CONFIG: "<requests per second> <CPU ms per request>" of one wrk run
# against nginx, both with CONFIG's openssl.cnf. The CPU time is nginx's
# workers' and wrk's: what serving and fetching a request cost, which the
# other jobs of a shared machine change less than they change throughput.
run() {
  local cnf=$work/$1.cnf i before after
  OPENSSL_CONF=$cnf nginx -c "$work/nginx.conf"
  for ((i = 0; i < 50; i++)); do
    OPENSSL_CONF=/dev/null openssl s_client -connect "127.0.0.1:$port" \
      </dev/null >/dev/null 2>&1 && break
    sleep 0.1
  done
  before=$(workers_cpu)
  { TIMEFORMAT='%U %S'; time OPENSSL_CONF=$cnf wrk -t2 -c32 -d"${seconds}s" \
      "https://127.0.0.1:$port/1m.bin" >"$work/wrk.out"; } 2>"$work/wrk.time"
  after=$(workers_cpu)
  stop_nginx
  awk -v before="$before" -v after="$after" -v wrk="$(cat "$work/wrk.time")" '
    /requests in/ { requests = $1 }
    /^Requests\/sec:/ { rate = $2 }
    END {
      split(wrk, t, " ")
      if (requests > 0) printf "%s %.4f\n", rate, 1000 * (after - before + t[1] + t[2]) / requests
    }' "$work/wrk.out"
}

bench_header
echo "# nginx 2 workers + wrk -t2 -c32, loopback, TLS 1.3 AES-256-GCM, 1 MiB"\
     "file; median of $runs alternating runs of ${seconds}s"
configs=(default aesmux aesmux+stats)
declare -A rates costs
for ((r = 1; r <= runs; r++)); do
  for config in "${configs[@]}"; do
    read -r rate cost < <(run "$config")
    [ -n "${cost:-}" ] || { echo "bench/nginx.sh: no rate from wrk ($config)" >&2; exit 1; }
    rates[$config]+="$rate "
    costs[$config]+="$cost "
    echo "# run $r $config: $rate requests/s, $cost CPU ms per request" >&2
  done
done

echo
echo "| configuration | requests/s | / default | / aesmux | CPU ms per request | / default | / aesmux |"
echo "|---|---:|---:|---:|---:|---:|---:|"
declare -A rate_of cost_of
for config in "${configs[@]}"; do
  rate_of[$config]=$(printf '%s\n' ${rates[$config]} | median)
  cost_of[$config]=$(printf '%s\n' ${costs[$config]} | median)
done
for config in "${configs[@]}"; do
  awk -v n="$config" -v m="${rate_of[$config]}" -v d="${rate_of[default]}" \
      -v a="${rate_of[aesmux]}" -v c="${cost_of[$config]}" \
      -v cd="${cost_of[default]}" -v ca="${cost_of[aesmux]}" 'BEGIN {
    printf "| %s | %.1f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
      n, m, m / d, m / a, c, c / cd, c / ca }'
done
echo
for config in "${configs[@]}"; do
  echo "$config: requests/s ${rates[$config]}; CPU ms per request ${costs[$config]}"
done

# aesmux served the records on both sides: the nginx master and workers,
# and the wrk process, each wrote a statistics file.
echo
"$AESMUX_BUILD/provider/aesmux" stats "$work/stats/s" | sed -n '1,3p;/AES-256-GCM/p'
