# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Shared by the integration tests: real programs on loopback with aesmux
# loaded through openssl.cnf, and proof from aesmux's statistics files that
# aesmux served their records. Source it after setting BUILD (the build
# directory); it creates $WORK and removes it (and every process started
# with `spawn`) on exit.

set -euo pipefail

SKIP=77  # ctest SKIP_RETURN_CODE
BUILD=$(cd "$BUILD" && pwd)
MODULE=$BUILD/provider/aesmux.so
WORK=$(mktemp -d /tmp/aesmux-integration.XXXXXX)
chmod 755 "$WORK"
SPAWNED=()
FAILURES=0

cleanup() {
  local pid
  for pid in "${SPAWNED[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
finish() {
  if [ "$FAILURES" -ne 0 ]; then
    echo "$FAILURES check(s) failed"
    exit 1
  fi
  echo "all checks passed"
}

# Exits with the skip code, saying why, when a program is missing.
require() {
  local program
  for program in "$@"; do
    if ! command -v "$program" >/dev/null; then
      echo "SKIP: $program is not installed (scripts/test.sh installs it)"
      exit "$SKIP"
    fi
  done
}

# Starts a command in the background and remembers it for cleanup.
spawn() {
  "$@" &
  SPAWNED+=("$!")
}

# A free TCP port on 127.0.0.1.
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until something listens on TCP PORT (up to 10 s), without
# connecting (a server may accept only one connection); gives up at once
# if the server's process PID, when given, has exited.
# wait_for_port PORT [PID]
wait_for_port() {
  local port=$1 pid=${2:-} i hex
  hex=$(printf ':%04X' "$port")
  for ((i = 0; i < 100; i++)); do
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      echo "the server on port $port exited" >&2
      return 1
    fi
    # /proc/net/tcp: local address column 2, state 0A = LISTEN.
    if awk -v p="$hex" '$2 ~ p"$" && $4 == "0A" { found = 1 } END { exit !found }' \
         /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "nothing listens on port $port" >&2
  return 1
}

# openssl.cnf files. A program under test loads aesmux and default_except.so
# (tests/integration/default_except.cc): OpenSSL's default provider without
# the ciphers aesmux serves. A fetch of one of those ciphers can then only
# succeed from aesmux (a program without aesmux cannot negotiate an AES
# suite at all), while digests, HMAC, the TLS KDFs, key exchange,
# signatures, the DRBG and the stitched AES-CBC-HMAC ciphers still come from
# the default provider's code. `default_properties = provider=aesmux` would
# say the same for AES but also exclude all of those; `?provider=aesmux`
# would let libssl take the default provider's AES when aesmux is missing.
# The peer that is not under test uses DEFAULT_CONFIG: the default provider.
EXCEPT_MODULE=$BUILD/tests/default_except.so
# Every name (and alias) of every cipher aesmux serves, asked of aesmux.
AESMUX_CIPHERS=$(OPENSSL_CONF=/dev/null openssl list -cipher-algorithms \
    -provider-path "$BUILD/provider" -provider aesmux |
  sed -n 's/^ *{\{0,1\} *\(.*[^ }]\) *}\{0,1\} @ aesmux$/\1/p' | tr -d ' ' |
  tr ',\n' '  ')
if [ -z "$AESMUX_CIPHERS" ] || [ ! -f "$EXCEPT_MODULE" ]; then
  echo "FAIL: aesmux lists no ciphers or $EXCEPT_MODULE is missing (build first)"
  exit 1
fi

# Where each aesmux configuration ("profile") sends a TLS or SSH record:
#   simd      kernels = auto: every request on the kernels (the fallback
#             path if this CPU has no tier: that is what auto means there)
#   fallback  kernels = none: every request on the fallback path
#   mixed     every family's fallback_max_len = 1K: small records (the
#             Finished message, an HTTP request, SSH control packets) on
#             the fallback path, full records on the kernels
#   mb        kernels = auto, for more threads encrypting CBC at once than
#             the process has CPUs: batches on the mb path, the rest simd
MIXED_MAX_LEN=1024
# tests/kernels/tier_list prints "<tier> yes" for each tier this CPU runs
# (a build without kernels has none).
tier_list=$BUILD/tests/kernels/tier_list
if [ -x "$tier_list" ] && "$tier_list" | grep -q ' yes$'; then
  AUTO_PATH=simd
else
  AUTO_PATH=fallback
  echo "note: this CPU runs no kernel tier; the simd profile expects the fallback path"
fi

profile_settings() {
  case $1 in
    simd | mb) echo "kernels = auto" ;;
    fallback) echo "kernels = none" ;;
    mixed)
      echo "kernels = auto"
      local family
      for family in ecb cbc ctr xts gcm; do
        echo "$family.fallback_max_len = $MIXED_MAX_LEN"
      done ;;
    *) echo "unknown profile $1" >&2; return 1 ;;
  esac
}

# The paths a profile implies, as "required|allowed|counted": every
# required path serves requests, no path outside allowed serves any, and
# the counted paths carry the bulk of the bytes.
profile_paths() {
  case $1 in
    simd) echo "$AUTO_PATH|$AUTO_PATH|$AUTO_PATH" ;;
    fallback) echo "fallback|fallback|fallback" ;;
    mixed) echo "$AUTO_PATH fallback|$AUTO_PATH fallback|$AUTO_PATH" ;;
    mb)
      if [ "$AUTO_PATH" = simd ]; then echo "mb|simd mb|simd mb"
      else echo "fallback|fallback|fallback"; fi ;;
  esac
}

# default_except's section: except = aesmux's ciphers and EXTRA names.
except_section() {
  printf '[except_sect]\nmodule = %s\nactivate = 1\nexcept = %s %s\n' \
    "$EXCEPT_MODULE" "$AESMUX_CIPHERS" "$1"
}

# An openssl.cnf with default_except (leaving out EXTRA_EXCEPT too) and,
# when AESMUX_LINES are given, aesmux with those lines in its section.
# providers_config FILE EXTRA_EXCEPT [AESMUX_LINES]
providers_config() {
  local file=$1 extra_except=$2 aesmux_lines=${3:-}
  {
    printf 'config_diagnostics = 1\nopenssl_conf = openssl_init\n'
    printf '[openssl_init]\nproviders = provider_sect\n'
    printf '[provider_sect]\nexcept = except_sect\n'
    [ -z "$aesmux_lines" ] || echo "aesmux = aesmux_sect"
    except_section "$extra_except"
    [ -z "$aesmux_lines" ] ||
      printf '[aesmux_sect]\nmodule = %s\nactivate = 1\n%s\n' "$MODULE" \
        "$aesmux_lines"
  } >"$file"
}

# aesmux writes statistics to <stats prefix>.<pid>.<id> when a process that
# served requests exits, and folds those of exited processes into
# <stats prefix>.summary.<uid> (every file holds the same counter lines)
# under a flock of <stats prefix>.lock.<uid> (an empty file).
# Ciphers named in EXTRA_EXCEPT are left out of default_except too (such as
# the stitched AES-CBC-HMAC ones, so that libssl runs MAC-then-encrypt
# suites on aesmux's AES-CBC).
# aesmux_config FILE STATS_PREFIX PROFILE [EXTRA_EXCEPT]
aesmux_config() {
  local settings
  settings=$(profile_settings "$3")
  providers_config "$1" "${4:-}" "stats_file = $2
$settings"
}

# The same without aesmux: nothing can serve the ciphers aesmux would.
# no_aesmux_config FILE
no_aesmux_config() { providers_config "$1" ""; }

DEFAULT_CONFIG=$WORK/default-only.cnf
printf 'openssl_conf = openssl_init\n[openssl_init]\n' >"$DEFAULT_CONFIG"

# A self-signed RSA certificate for 127.0.0.1 / localhost.
make_certificate() {
  OPENSSL_CONF=$DEFAULT_CONFIG openssl req -x509 -newkey rsa:2048 -nodes \
    -days 2 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
  chmod 644 "$WORK/key.pem" "$WORK/cert.pem"
}

# A file of random bytes: make_payload FILE MIB
make_payload() {
  head -c "$(($2 * 1048576 + 12345))" /dev/urandom >"$1"
  chmod 644 "$1"
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# Sums the statistics files <prefix>.* for one algorithm on each path:
# prints "<path> <requests> <bytes>" for simd, fallback, afalg and mb.
served() {
  local prefix=$1 algorithm=$2
  cat "$prefix".* 2>/dev/null | awk -v a="$algorithm" '
    $1 == a { requests[$2] += $3; bytes[$2] += $4 }
    END { split("simd fallback afalg mb", paths, " ")
          for (i = 1; i <= 4; i++)
            printf "%s %.0f %.0f\n", paths[i], requests[paths[i]], bytes[paths[i]] }'
}

# Fails unless processes wrote <prefix>.* files, each (but the locks) with
# a line for ALGORITHM: a missing file must not pass for "aesmux served
# something".
# have_stats LABEL PREFIX ALGORITHM
have_stats() {
  local label=$1 prefix=$2 algorithm=$3 file
  if ! ls "$prefix".* >/dev/null 2>&1; then
    fail "$label: no statistics file $prefix.* (aesmux not loaded?)"
    return 1
  fi
  for file in "$prefix".*; do
    case $file in "$prefix".lock.*) continue ;; esac
    if ! awk -v a="$algorithm" '$1 == a { found = 1 } END { exit !found }' "$file"; then
      fail "$label: $file has no line for $algorithm"
      return 1
    fi
  done
}

# Checks that aesmux served at least MIN_BYTES of ALGORITHM to the processes
# writing <prefix>.*, on the paths PROFILE implies (profile_paths).
# expect_served LABEL PREFIX ALGORITHM PROFILE MIN_BYTES
expect_served() {
  local label=$1 prefix=$2 algorithm=$3 profile=$4 min_bytes=$5
  local path requests bytes required allowed counted ok=1 counted_bytes=0
  have_stats "$label" "$prefix" "$algorithm" || return 0
  local -A req=() byt=()
  while read -r path requests bytes; do
    req[$path]=$requests byt[$path]=$bytes
  done < <(served "$prefix" "$algorithm")
  IFS='|' read -r required allowed counted < <(profile_paths "$profile")
  for path in $required; do [ "${req[$path]}" -gt 0 ] || ok=0; done
  for path in simd fallback afalg mb; do
    [[ " $allowed " == *" $path "* ]] || [ "${req[$path]}" -eq 0 ] || ok=0
  done
  for path in $counted; do counted_bytes=$((counted_bytes + byt[$path])); done
  [ "$counted_bytes" -ge "$min_bytes" ] || ok=0
  local counts
  counts=$(for path in simd fallback afalg mb; do
             printf '%s %s/%s, ' "$path" "${req[$path]}" "${byt[$path]}"
           done)
  counts="${counts%, } requests/bytes"
  if [ "$ok" -eq 1 ]; then
    pass "$label: aesmux served $algorithm as $profile implies ($counts)"
  else
    fail "$label: $algorithm under the $profile profile wants requests on {$required}, none outside {$allowed}, >= $min_bytes bytes on {$counted}; got $counts"
  fi
}

# Checks that the processes writing <prefix>.* ran aesmux and that it
# served no request of ALGORITHM (the documented case where libssl uses
# the default provider's stitched AES-CBC-HMAC; the rows using it turn
# session tickets off, whose keys would otherwise be AES-CBC too). A
# process that served nothing at all writes no statistics: then CONFIG
# (their openssl.cnf) must load aesmux; without CONFIG (`-engine aesmux`,
# which fails the command if it cannot load) that suffices.
# expect_none LABEL PREFIX ALGORITHM [CONFIG]
expect_none() {
  local label=$1 prefix=$2 algorithm=$3 config=${4:-} total
  if ! ls "$prefix".* >/dev/null 2>&1; then
    if [ -z "$config" ] ||
       OPENSSL_CONF=$config openssl list -providers 2>/dev/null |
         grep -q '^  aesmux$'; then
      pass "$label: aesmux loaded and served nothing, no $algorithm, as documented"
    else
      fail "$label: no statistics file $prefix.*, and $config does not load aesmux"
    fi
    return 0
  fi
  have_stats "$label" "$prefix" "$algorithm" || return 0
  total=$(served "$prefix" "$algorithm" | awk '{ r += $2; b += $3 } END { printf "%.0f/%.0f\n", r, b }')
  if [ "$total" = 0/0 ]; then
    pass "$label: aesmux loaded and served no $algorithm, as documented"
  else
    fail "$label: aesmux served $total requests/bytes of $algorithm"
  fi
}
