#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Runs the afalg suite (tests/afalg/afalg_test) on a real kernel: Debian 12's
# linux-image-6.1.0-*-amd64 booted under qemu (TCG) with an initramfs
# holding busybox, the test binaries, their libraries and the crypto
# modules, on a machine with QEMU's virtio-crypto device, whose driver
# (virtio_crypto_aes_cbc) is an asynchronous offload driver for cbc(aes)
# beside the kernel's CPU code (aesni-intel, of higher priority). The suites
# force the afalg path (CBC then binds the virtio driver by its name, the
# other families the CPU code) or keep the default (afalg = auto, which
# takes only the virtio driver); `aesmux info` shows each family's state
# under both policies. Prints the gtest summary; exits non-zero if a module
# did not load, /proc/crypto lacks a driver the modules provide, a policy
# does not do what it should, a test failed or was skipped (the guest has
# everything the suite needs), the device completed fewer requests than
# aesmux's statistics count for CBC on the afalg path, or the guest did not
# report. The recipe is in DEVELOPERS.md; what the arm64 variant
# (test-afalg-vm-arm64.sh) shares with it is in afalg-vm-common.sh.
#
# usage: scripts/test-afalg-vm.sh [gtest filter]
# Downloads are cached in $AESMUX_BUILD/afalg-vm/cache.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/afalg-vm-common.sh"

vm_options "$@"

install_deps qemu-system-x86 busybox-static cpio python3
build >/dev/null

vm_setup amd64 "$AESMUX_BUILD"
vm_fetch_kernel

log "initramfs for $vm_kver"
vm_new_root /bin/busybox
vm_add_modules af_alg algif_skcipher algif_aead cryptd crypto_simd gf128mul \
  ghash-generic ghash-clmulni-intel ecb ctr xts gcm aesni-intel crypto_user \
  virtio_pci virtio_crypto virtio_console
vm_add_binaries "$AESMUX_BUILD/tests/afalg/afalg_test" \
  "$AESMUX_BUILD/tests/afalg/device_removal_test" \
  "$AESMUX_BUILD/provider/aesmux.so" "$AESMUX_BUILD/provider/aesmux"
mkdir -p "$vm_root/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$vm_root/lib64/"

# Last, the device unplugged under running streams (device_removal_test;
# PCI hot-unplug: the pc machine only).
vm_write_init "$AESMUX_BUILD/tests/afalg/afalg_test" "$vm_filter" \
  "$(vm_policy_lines "$AESMUX_BUILD/provider/aesmux" "$AESMUX_BUILD/provider")
$(vm_removal_lines "$AESMUX_BUILD/tests/afalg/device_removal_test" \
  "$AESMUX_BUILD/provider/aesmux" "$AESMUX_BUILD/provider")" \
  "$AESMUX_BUILD/provider/aesmux"
# shellcheck disable=SC2046
vm_boot ttyS0 qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 512 \
  $(vm_devices pci)

vm_report_tests

# What the guest must have had for its results to mean anything.
status=0
vm_check_done || status=1
vm_check_modules || status=1
vm_check_drivers 'ecb(aes)=ecb-aes-aesni' 'cbc(aes)=cbc-aes-aesni' \
  'cbc(aes)=virtio_crypto_aes_cbc' 'ctr(aes)=ctr-aes-aesni' \
  'xts(aes)=xts-aes-aesni' 'gcm(aes)=generic-gcm-aesni' || status=1
vm_check_no_skips || status=1
log "afalg states (aesmux info) under each policy"
vm_check_policies '[a-z]+-aes-aesni|generic-gcm-aesni' || status=1
log "where CBC's requests went"
vm_check_device_work || status=1
log "the device unplugged under running streams (device_removal_test)"
vm_check_removal || status=1
[ $status = 0 ] || exit 1
echo "afalg VM suite passed"
