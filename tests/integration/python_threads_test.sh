#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Python's ssl module on aesmux, in a process kept to (at most) 2 CPUs, 16
# threads per CPU each uploading 2 MiB over TLS 1.2 ECDHE-RSA-AES128-SHA256
# (encrypt-then-MAC: aesmux's AES-128-CBC) at once to a threaded Python TLS
# server on the default provider, which returns each upload's sha256. With
# more threads encrypting CBC than CPUs, aesmux combines their records into
# multi-buffer batches: the uploader's statistics must show the mb path
# (and every record on simd or mb, none elsewhere).
#
# usage: python_threads_test.sh BUILD_DIR
BUILD=$1
source "$(dirname "$0")/lib.sh"
require python3 openssl

make_certificate
# The uploader's CPUs: the first two this process may run on. A thread
# spends a small part of its time encrypting (MAC, send and the GIL take
# the rest), so it takes many threads per CPU for more of them to be inside
# an encryption at once than there are CPUs: with 4 per CPU, batches came
# only while writing the statistics file took milliseconds inside it.
cpus=$(/usr/bin/python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[:2])))')
threads=$((16 * $(tr ',' '\n' <<<"$cpus" | wc -l)))

cat >"$WORK/server.py" <<'PY'
import hashlib, os, socket, ssl, sys, threading
cert, key, port_file = sys.argv[1:]
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
listener = socket.create_server(("127.0.0.1", 0), backlog=128)
with open(port_file + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)

def serve(conn):
    with context.wrap_socket(conn, server_side=True) as tls:
        header = b""
        while len(header) < 8:
            header += tls.recv(8 - len(header))
        left, digest = int.from_bytes(header, "big"), hashlib.sha256()
        while left > 0:
            data = tls.recv(min(65536, left))
            if not data:
                break
            digest.update(data)
            left -= len(data)
        tls.sendall(digest.hexdigest().encode())

while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
PY
OPENSSL_CONF=$DEFAULT_CONFIG spawn /usr/bin/python3 "$WORK/server.py" \
  "$WORK/cert.pem" "$WORK/key.pem" "$WORK/port"
for ((i = 0; i < 100; i++)); do [ -f "$WORK/port" ] && break; sleep 0.1; done
[ -f "$WORK/port" ] || { echo "FAIL: the Python TLS server did not start"; exit 1; }
port=$(cat "$WORK/port")

cat >"$WORK/uploader.py" <<'PY'
import hashlib, os, socket, ssl, sys, threading
port, cafile, threads = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
context = ssl.create_default_context(cafile=cafile)
context.maximum_version = ssl.TLSVersion.TLSv1_2
context.set_ciphers("ECDHE-RSA-AES128-SHA256")
payload = os.urandom(2 << 20)
expected = hashlib.sha256(payload).hexdigest().encode()
start = threading.Barrier(threads)
failures = []

def upload():
    try:
        with socket.create_connection(("127.0.0.1", port)) as raw, \
             context.wrap_socket(raw, server_hostname="localhost") as tls:
            if tls.cipher()[0] != "ECDHE-RSA-AES128-SHA256":
                failures.append("negotiated " + tls.cipher()[0])
            start.wait()
            tls.sendall(len(payload).to_bytes(8, "big"))
            tls.sendall(payload)
            answer = b""
            while len(answer) < len(expected):
                data = tls.recv(64)
                if not data:
                    break
                answer += data
            if answer != expected:
                failures.append("sha256 differs")
    except Exception as e:
        failures.append(repr(e))

workers = [threading.Thread(target=upload) for _ in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print("python threads:", threads, "uploads,", len(failures), "failed",
      failures[:3])
sys.exit(1 if failures else 0)
PY
# Whether threads meet inside aesmux is up to the scheduler: a round on a
# machine busy with other work may see none. Up to three rounds, each with
# its own statistics; the last one run is checked.
for round in 1 2 3; do
  stats=$WORK/stats-uploader-$round
  aesmux_config "$WORK/uploader-$round.cnf" "$stats" mb
  if ! OPENSSL_CONF=$WORK/uploader-$round.cnf timeout 120 taskset -c "$cpus" \
       /usr/bin/python3 "$WORK/uploader.py" "$port" "$WORK/cert.pem" "$threads"; then
    fail "python ssl: $threads threaded uploads failed (round $round)"
    break
  fi
  pass "python ssl: $threads threads uploaded 2 MiB each, sha256 matches (round $round)"
  mb=$(served "$stats" AES-128-CBC | awk '$1 == "mb" { print $2 }')
  [ "${mb:-0}" -gt 0 ] && break
  echo "round $round: no batch formed; again"
done
expect_served "python ssl, $threads threads (uploader)" "$stats" \
  AES-128-CBC mb $((threads * 2 * 1048576))
finish
