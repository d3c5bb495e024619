#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# The afalg path's benchmarks on an offload driver: the guest of
# test-afalg-vm.sh (Debian 12's kernel under qemu, TCG, with QEMU's
# virtio-crypto device), without the kernel's AES-NI module, so that the
# virtio driver is the kernel's best cbc(aes) and OpenSSL's afalg engine,
# which binds "cbc(aes)", reaches the device too. Not a test (test.sh does
# not run it): it takes some minutes of emulated CPU.
#
#   1. offload_bench (bench/afalg): aesmux's io_uring path against OpenSSL's
#      afalg ENGINE (Debian's engines-3/afalg.so), AES-128-CBC, 1, 4 and 16
#      streams (threads, and ASYNC jobs on one thread) at 1 KiB, 16 KiB and
#      64 KiB: requests per second, system calls per request, and the
#      device's own count of completed requests per request (QEMU's, through
#      scripts/vm-control.py).
#   2. aesmux calibrate --families cbc (--quick unless --full): where the
#      device beats the guest's CPU path (aesmux's kernels, emulated) and
#      the cbc.afalg_min_len it writes; the calibration file and plot are
#      copied out of the guest into $AESMUX_BUILD/afalg-vm-bench/.
#
# --cpu MODEL is qemu's -cpu (default max: AES-NI, emulated); for a guest
# without AES instructions, as the processors beside most offload engines
# are: --cpu max,aes=off,pclmulqdq=off,vaes=off,vpclmulqdq=off.
#
# usage: bench/afalg-vm.sh [--full] [--no-engine] [--no-calibrate]
#                                  [--cpu MODEL] [offload_bench options...]
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"
source "$(dirname "$0")/../scripts/afalg-vm-common.sh"

calibrate=--quick engine=1 cpu=max
while [ $# -gt 0 ]; do
  case $1 in
    --full) calibrate=; shift ;;
    --cpu) cpu=$2; shift 2 ;;
    --no-engine) engine=0; shift ;;
    --no-calibrate) calibrate=none; shift ;;
    *) break ;;
  esac
done

install_deps qemu-system-x86 busybox-static cpio python3
build >/dev/null

vm_setup amd64 "$AESMUX_BUILD"
vm_fetch_kernel
vm=$AESMUX_BUILD/afalg-vm-bench
vm_root=$vm/root
mkdir -p "$vm"

log "initramfs for $vm_kver"
vm_new_root /bin/busybox
# No aesni-intel: cbc(aes)'s best is the virtio driver (cbc(aes-generic),
# the only CPU code left, has a lower priority).
vm_add_modules af_alg algif_skcipher algif_aead crypto_user ecb ctr xts gcm \
  ghash-generic virtio_pci virtio_crypto virtio_console
engines=$(openssl version -e | sed 's/^ENGINESDIR: "\(.*\)"$/\1/')
vm_add_binaries "$AESMUX_BUILD/bench/afalg/offload_bench" \
  "$AESMUX_BUILD/provider/aesmux.so" "$AESMUX_BUILD/provider/aesmux" \
  "$engines/afalg.so"
mkdir -p "$vm_root/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$vm_root/lib64/"

extra=
if [ $engine = 1 ]; then
  extra+="$AESMUX_BUILD/bench/afalg/offload_bench $* 2>&1 | sed 's/^/BENCH: /'
"
fi
if [ "$calibrate" != none ]; then
  extra+="OPENSSL_MODULES=$AESMUX_BUILD/provider $AESMUX_BUILD/provider/aesmux \
calibrate $calibrate --families cbc --output /tmp/calibration.conf --plot /tmp/calibration.svg \
</dev/null 2>&1 | sed 's/^/CALIBRATE: /'
sed 's/^/CALIBRATION-FILE: /' /tmp/calibration.conf
sed 's/^/CALIBRATION-SVG: /' /tmp/calibration.svg
"
fi
vm_write_init "" "" "$extra"
# shellcheck disable=SC2046
vm_boot ttyS0 qemu-system-x86_64 -accel tcg -cpu "$cpu" -smp 2 -m 1024 \
  $(vm_devices pci)

grep '^AFALG-VM: .*->' "$vm/console.txt" | sed 's/^AFALG-VM: /  driver: /' ||
  true
if [ $engine = 1 ]; then
  log "aesmux's afalg path against OpenSSL's afalg engine (offload_bench)"
  sed -n 's/^BENCH: //p' "$vm/console.txt" | grep -v '^cell '
fi
if [ "$calibrate" != none ]; then
  log "aesmux calibrate ${calibrate:-(full)} --families cbc in the guest (-cpu $cpu)"
  sed -n 's/^CALIBRATION-FILE: //p' "$vm/console.txt" >"$vm/calibration.conf"
  sed -n 's/^CALIBRATION-SVG: //p' "$vm/console.txt" >"$vm/calibration.svg"
  grep -E '^CALIBRATE: +AES-[0-9]+-CBC' "$vm/console.txt" |
    sed 's/^CALIBRATE: /  /' || true
  grep -vE '^#|^$' "$vm/calibration.conf" | sed 's/^/  /' || true
  echo "  file: $vm/calibration.conf, plot: $vm/calibration.svg"
fi
grep -q '^AFALG-VM: done' "$vm/console.txt" ||
  { echo "the guest did not finish" >&2; tail -n 30 "$vm/console.txt" >&2; exit 1; }
