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
# connecting (a server may accept only one connection).
wait_for_port() {
  local port=$1 i hex
  hex=$(printf ':%04X' "$port")
  for ((i = 0; i < 100; i++)); do
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

# default_except's section, leaving out aesmux's ciphers.
except_section() {
  printf '[except_sect]\nmodule = %s\nactivate = 1\nexcept = %s\n' \
    "$EXCEPT_MODULE" "$AESMUX_CIPHERS"
}

# aesmux writes statistics to <stats prefix>.<pid> when a process exits.
# aesmux_config FILE STATS_PREFIX
aesmux_config() {
  cat >"$1" <<CNF
config_diagnostics = 1
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
except = except_sect
aesmux = aesmux_sect
$(except_section)
[aesmux_sect]
module = $MODULE
activate = 1
stats_file = $2
CNF
}

# The same without aesmux: nothing can serve the ciphers aesmux would.
# no_aesmux_config FILE
no_aesmux_config() {
  cat >"$1" <<CNF
config_diagnostics = 1
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
except = except_sect
$(except_section)
CNF
}

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

# Sums the statistics files <prefix>.* for one algorithm over every path
# aesmux served it on: prints "<requests> <bytes>".
served() {
  local prefix=$1 algorithm=$2
  cat "$prefix".* 2>/dev/null | awk -v a="$algorithm" '
    $1 == a { requests += $3; bytes += $4 }
    END { printf "%d %d\n", requests, bytes }'
}

# Checks that the processes writing <prefix>.* had aesmux serve at least
# MIN_BYTES of ALGORITHM: expect_served LABEL PREFIX ALGORITHM MIN_BYTES
expect_served() {
  local label=$1 prefix=$2 algorithm=$3 min_bytes=$4 requests bytes
  if ! ls "$prefix".* >/dev/null 2>&1; then
    fail "$label: no statistics file $prefix.* (aesmux not loaded?)"
    return
  fi
  read -r requests bytes < <(served "$prefix" "$algorithm")
  if [ "$requests" -gt 0 ] && [ "$bytes" -ge "$min_bytes" ]; then
    pass "$label: aesmux served $algorithm ($requests requests, $bytes bytes)"
  else
    fail "$label: aesmux served $requests requests / $bytes bytes of $algorithm (want >= $min_bytes bytes)"
  fi
}

# Checks that the records of a transfer of MIN_BYTES did not go through
# aesmux's ALGORITHM (the documented case where libssl prefers the default
# provider's stitched AES-CBC-HMAC); small uses such as session tickets may.
# expect_records_elsewhere LABEL PREFIX ALGORITHM MIN_BYTES
expect_records_elsewhere() {
  local label=$1 prefix=$2 algorithm=$3 min_bytes=$4 requests bytes
  read -r requests bytes < <(served "$prefix" "$algorithm")
  if [ "$bytes" -lt "$min_bytes" ]; then
    pass "$label: records not on aesmux's $algorithm, as documented ($requests other requests, $bytes bytes)"
  else
    fail "$label: aesmux served $bytes bytes of $algorithm records"
  fi
}
