#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# OpenSSH: sshd (privilege separation and its seccomp sandbox as Debian
# ships them) on a loopback port and the scp client, both with aesmux
# enabled through OPENSSL_CONF, copy a multi-MiB file both ways with each
# AES cipher; sha256 must match and both sides' statistics must show aesmux
# served the cipher on the paths their profiles (lib.sh) imply: sshd mixed
# (control packets on the fallback path, data on the kernels), the scp
# client alternately simd and fallback.
#
# usage: openssh_test.sh BUILD_DIR
BUILD=$1
source "$(dirname "$0")/lib.sh"
require /usr/sbin/sshd scp ssh-keygen

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: sshd needs root to run with privilege separation"
  exit "$SKIP"
fi

mkdir -p /run/sshd
chmod 755 /run/sshd
mkdir -m 1777 "$WORK/stats"
ssh-keygen -q -t ed25519 -N '' -f "$WORK/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$WORK/client_key"
cp "$WORK/client_key.pub" "$WORK/authorized_keys"
chmod 600 "$WORK/authorized_keys"
make_payload "$WORK/payload.bin" 8
expected=$(sha256 "$WORK/payload.bin")

port=$(free_port)
cat >"$WORK/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $WORK/host_key
AuthorizedKeysFile $WORK/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $WORK/sshd.pid
Subsystem sftp internal-sftp
Ciphers aes128-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com
LogLevel VERBOSE
CONF
aesmux_config "$WORK/sshd-openssl.cnf" "$WORK/stats/sshd" mixed
OPENSSL_CONF=$WORK/sshd-openssl.cnf spawn /usr/sbin/sshd -D -e \
  -f "$WORK/sshd_config" 2>"$WORK/sshd.log"
wait_for_port "$port"

declare -A algorithm_of=(
  [aes128-ctr]=AES-128-CTR [aes256-ctr]=AES-256-CTR
  [aes128-gcm@openssh.com]=AES-128-GCM [aes256-gcm@openssh.com]=AES-256-GCM)
declare -A client_profile_of=(
  [aes128-ctr]=simd [aes256-ctr]=fallback
  [aes128-gcm@openssh.com]=fallback [aes256-gcm@openssh.com]=simd)

ssh_options=(-P "$port" -i "$WORK/client_key" -o BatchMode=yes
             -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
             -o LogLevel=ERROR)
for cipher in aes128-ctr aes256-ctr aes128-gcm@openssh.com aes256-gcm@openssh.com; do
  algorithm=${algorithm_of[$cipher]}
  client_profile=${client_profile_of[$cipher]}
  client_stats=$WORK/stats/scp-${cipher%%@*}
  aesmux_config "$WORK/client-openssl.cnf" "$client_stats" "$client_profile"
  rm -f "$WORK/stats/sshd".* "$WORK/uploaded" "$WORK/downloaded"
  upload_ok=0 download_ok=0
  if OPENSSL_CONF=$WORK/client-openssl.cnf timeout 120 scp "${ssh_options[@]}" \
       -c "$cipher" "$WORK/payload.bin" "root@127.0.0.1:$WORK/uploaded" &&
     [ "$(sha256 "$WORK/uploaded")" = "$expected" ]; then
    upload_ok=1
  fi
  if OPENSSL_CONF=$WORK/client-openssl.cnf timeout 120 scp "${ssh_options[@]}" \
       -c "$cipher" "root@127.0.0.1:$WORK/payload.bin" "$WORK/downloaded" &&
     [ "$(sha256 "$WORK/downloaded")" = "$expected" ]; then
    download_ok=1
  fi
  if [ "$upload_ok$download_ok" = 11 ]; then
    pass "scp -c $cipher: 8 MiB up and down, sha256 matches"
  else
    fail "scp -c $cipher: upload ok=$upload_ok download ok=$download_ok; sshd: $(tail -3 "$WORK/sshd.log")"
    continue
  fi
  # Each direction moves 8 MiB through both ends.
  expect_served "scp -c $cipher (client, $client_profile)" "$client_stats" \
    "$algorithm" "$client_profile" $((16 * 1048576))
  # sshd's session processes leave through _exit(), so their statistics
  # are the last progress write, made at most once a second
  # (core::kProgressIntervalNs): the first when a session has served
  # 1 MiB (core::kProgressBytes), so each of the two connections reports
  # about that much, most of it on the kernels (1.5 MiB between them).
  # They also end a moment after the client.
  for ((i = 0; i < 50; i++)); do
    bytes=$(served "$WORK/stats/sshd" "$algorithm" | awk '{ b += $3 } END { print b }')
    [ "$bytes" -ge $((3 * 1048576 / 2)) ] && break
    sleep 0.1
  done
  expect_served "scp -c $cipher (sshd, mixed)" "$WORK/stats/sshd" \
    "$algorithm" mixed $((3 * 1048576 / 2))
done

if grep -qi "sandbox\|seccomp\|signal 31" "$WORK/sshd.log"; then
  fail "sshd reported a sandbox problem: $(grep -i 'sandbox\|seccomp\|signal 31' "$WORK/sshd.log" | head -3)"
fi
finish
