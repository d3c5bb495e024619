#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Runs the afalg suite (tests/afalg/afalg_test, with the path forced) on a
# real kernel: Debian 12's linux-image-6.1.0-*-amd64 booted under qemu (TCG)
# with an initramfs holding busybox, the test binaries, their libraries and
# the crypto modules. Then compares aesmux's afalg path with OpenSSL's own
# afalg engine for AES-128-CBC at 16 KiB, synchronous and -async_jobs 8.
# Prints the gtest summary and the ratios; exits non-zero if a module did
# not load in the guest, /proc/crypto lacks a driver the modules provide, a
# test failed or was skipped (the guest has everything the suite needs), or
# the guest did not report. The recipe is in DEVELOPERS.md; what the arm64
# variant (test-afalg-vm-arm64.sh) shares with it is in afalg-vm-common.sh.
#
# usage: scripts/test-afalg-vm.sh [--no-bench] [gtest filter]
# Downloads are cached in $AESMUX_BUILD/afalg-vm/cache.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/afalg-vm-common.sh"

vm_options "$@"

install_deps qemu-system-x86 busybox-static cpio
build >/dev/null

vm_setup amd64 "$AESMUX_BUILD"
vm_fetch_kernel

log "initramfs for $vm_kver"
vm_new_root /bin/busybox
vm_add_modules af_alg algif_skcipher algif_aead cryptd crypto_simd gf128mul \
  ghash-generic ghash-clmulni-intel ecb ctr xts gcm aesni-intel crypto_user
engines=$(openssl version -e | sed 's/^ENGINESDIR: "\(.*\)"$/\1/')
vm_add_binaries "$AESMUX_BUILD/tests/afalg/afalg_test" \
  "$AESMUX_BUILD/tests/afalg/afalg_bench" "$AESMUX_BUILD/provider/aesmux.so" \
  "$(command -v openssl)" "$engines/afalg.so"
mkdir -p "$vm_root/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$vm_root/lib64/"

extra=
if [ $vm_bench = 1 ]; then
  extra=$(cat <<EOF
echo "AFALG-VM: engine \$(openssl engine -t afalg 2>&1 | tr '\n' ' ')"
for size in 16384; do
  $AESMUX_BUILD/tests/afalg/afalg_bench \$size 2 | sed 's/^/AFALG-VM: staging /'
done
export AESMUX_AFALG=force
for run in 1 2 3; do
  for jobs in 0 8; do
    # -elapsed: wall-clock time (by default speed counts user CPU time
    # only, which leaves out the kernel's work).
    set -- -elapsed -evp aes-128-cbc -bytes 16384 -seconds 2 -mr
    [ \$jobs = 0 ] || set -- "\$@" -async_jobs \$jobs
    e=\$(openssl speed -engine afalg "\$@" 2>/dev/null | awk -F: '/^\+F:/ { print \$4 }')
    a=\$(openssl speed -provider-path $AESMUX_BUILD/provider -provider aesmux \
         -provider default -propquery provider=aesmux "\$@" 2>/dev/null |
         awk -F: '/^\+F:/ { print \$4 }')
    echo "AFALG-VM: speed jobs=\$jobs run=\$run engine=\$e aesmux=\$a"
  done
done
EOF
)
fi
vm_write_init "$AESMUX_BUILD/tests/afalg/afalg_test" "$vm_filter" "$extra"
vm_boot ttyS0 qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 512

vm_report_tests

if [ "$vm_bench" = 1 ]; then
  log "aesmux afalg path vs OpenSSL's afalg engine, AES-128-CBC, 16 KiB"
  grep '^AFALG-VM: engine' "$vm/console.txt" | sed 's/^AFALG-VM: /  /' || true
  grep '^AFALG-VM: staging' "$vm/console.txt" |
    awk '{ printf "  %-13s %s bytes: %8.0f requests/s %8.1f MB/s\n", $3, $4, $5, $6 }'
  grep '^AFALG-VM: speed' "$vm/console.txt" | sed 's/^AFALG-VM: /  /'
  grep '^AFALG-VM: speed' "$vm/console.txt" | awk '
    { split($3, j, "="); split($5, e, "="); split($6, a, "=");
      if (e[2] > 0 && a[2] > 0) { n[j[2]]++; r[j[2], n[j[2]]] = a[2] / e[2];
                                  es[j[2]] += e[2]; as[j[2]] += a[2] } }
    END { for (k in n) {
            m = n[k]; for (i = 1; i <= m; i++) v[i] = r[k, i];
            for (i = 1; i <= m; i++) for (x = i + 1; x <= m; x++)
              if (v[x] < v[i]) { t = v[i]; v[i] = v[x]; v[x] = t }
            printf "  async_jobs %s: engine %.1f MB/s, aesmux %.1f MB/s (means); median ratio aesmux/engine %.2f over %d runs\n",
                   k, es[k] / m / 1e6, as[k] / m / 1e6, v[int((m + 1) / 2)], m } }'
fi

# What the guest must have had for its results to mean anything.
status=0
vm_check_done || status=1
vm_check_modules || status=1
vm_check_drivers 'ecb(aes)=ecb-aes-aesni' 'cbc(aes)=cbc-aes-aesni' \
  'ctr(aes)=ctr-aes-aesni' 'xts(aes)=xts-aes-aesni' \
  'gcm(aes)=generic-gcm-aesni' || status=1
vm_check_no_skips || status=1
[ $status = 0 ] || exit 1
echo "afalg VM suite passed"
