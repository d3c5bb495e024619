#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Runs the afalg suite on a real arm64 kernel: Debian 12's
# linux-image-6.1.0-*-arm64 booted under qemu-system-aarch64 -M virt
# -cpu max (TCG), whose AF_ALG offers the kernel's ARMv8 Crypto Extensions
# drivers (*-ce) besides the generic ones, and the driver of QEMU's
# virtio-crypto device (virtio-mmio: virtio_crypto_aes_cbc, an offload
# driver for cbc(aes) of lower priority than cbc-aes-ce), with the binaries
# of the arm64 cross build (build-arm64, as test-arm64.sh makes it). As on
# amd64 (test-afalg-vm.sh, whose structure afalg-vm-common.sh shares), the
# suites force the afalg path or keep the default (afalg = auto); `aesmux
# info` shows each family's state under both policies. Fails if a module
# does not load, if an algorithm lacks its Crypto Extensions driver or cbc
# the virtio driver, if a policy does not do what it should with them
# (auto: cbc on the virtio driver, bound by its name, the rest off, CPU
# software; force: cbc on the virtio driver, the rest on the Crypto
# Extensions drivers), if the device completed fewer requests than
# aesmux's statistics count for CBC on the afalg path, or if a test fails
# or skips (the guest has all the suite needs). fork_test runs there too:
# forks on a real kernel. (The device cannot be unplugged from virtio-mmio:
# device_removal_test runs on amd64 only.)
#
# Unless --no-bench: afalg_bench --vs-cpu, the afalg path against OpenSSL's
# own code (the fallback path: no kernels on arm64) by request size, with
# OpenSSL on the Crypto Extensions and on NEON only (OPENSSL_armcap=1, a
# board without them). Under TCG these are emulation numbers: they tell
# what a request costs relative to a byte of AES in the same emulator, not
# how fast a board is.
#
# usage: scripts/test-afalg-vm-arm64.sh [--no-bench] [gtest filter]
# Downloads are cached in $AESMUX_ARM64_BUILD/afalg-vm-arm64/cache.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/afalg-vm-common.sh"

vm_options "$@"

install_arm64_deps qemu-system-arm cpio python3
build_arm64 >/dev/null

vm_setup arm64 "$AESMUX_ARM64_BUILD"
vm_objcopy=aarch64-linux-gnu-objcopy
vm_list_libs="qemu-aarch64-static /lib/ld-linux-aarch64.so.1 --list"
vm_fetch_kernel

# busybox for the guest: Debian's arm64 busybox-static, unpacked (it cannot
# be installed beside the host's).
busybox=$vm_cache/busybox-arm64/bin/busybox
if [ ! -x "$busybox" ]; then
  log "downloading busybox-static:arm64"
  (cd "$vm_cache" && rm -rf busybox-arm64 busybox-static_*_arm64.deb &&
     apt-get download busybox-static:arm64 2>/dev/null &&
     dpkg -x busybox-static_*_arm64.deb busybox-arm64 &&
     rm -f busybox-static_*_arm64.deb)
fi

log "initramfs for $vm_kver"
vm_new_root "$busybox"
vm_add_modules af_alg algif_skcipher algif_aead crypto_user gf128mul \
  ghash-generic ghash-ce ecb ctr xts gcm aes-ce-cipher aes-ce-blk \
  aes-neon-blk aes-neon-bs virtio_mmio virtio_crypto virtio_console
build=$AESMUX_ARM64_BUILD
vm_add_binaries "$build/tests/afalg/afalg_test" \
  "$build/bench/afalg/afalg_bench" "$build/provider/aesmux.so" \
  "$build/provider/aesmux" "$build/tests/provider/fork_test"

# fork_test too (it also runs under user emulation): forks on a real
# arm64 kernel.
extra=$(cat <<EOF
AESMUX_TEST_MODULE=$build/provider/aesmux.so $build/tests/provider/fork_test \
  --gtest_color=no >/tmp/fork_test.log 2>&1
echo "AFALG-VM: fork-test-exit \$?"
sed 's/^/FORK-TEST: /' /tmp/fork_test.log
$(vm_policy_lines "$build/provider/aesmux" "$build/provider")
EOF
)
if [ $vm_bench = 1 ]; then
  extra+=$(cat <<EOF

for cpu in ce:0 neon:1; do
  [ \${cpu#*:} = 0 ] && unset OPENSSL_armcap || export OPENSSL_armcap=\${cpu#*:}
  $build/bench/afalg/afalg_bench --vs-cpu | sed "s/^/AFALG-VM: bench \${cpu%:*} /"
done
EOF
)
fi
vm_write_init "$build/tests/afalg/afalg_test" "$vm_filter" "$extra" \
  "$build/provider/aesmux"
# virtio-mmio transports are legacy (virtio 0.9) unless told otherwise, and
# the virtio_crypto driver takes only a virtio 1.0 device.
# shellcheck disable=SC2046
vm_boot ttyAMA0 qemu-system-aarch64 -M virt -cpu max -smp 2 -m 1024 \
  -global virtio-mmio.force-legacy=false $(vm_devices device)

vm_report_tests

if [ "$vm_bench" = 1 ]; then
  log "afalg path vs OpenSSL's own code (fallback), arm64 under TCG: emulation numbers"
  grep '^AFALG-VM: bench' "$vm/console.txt" | sed 's/^AFALG-VM: bench /  /'
fi

log "fork_test on the arm64 kernel"
grep -E '^FORK-TEST: (\[ +(OK|FAILED|SKIPPED) +\]|.*Failure$)' "$vm/console.txt" |
  sed 's/^FORK-TEST: /  /' || true

status=0
vm_check_done || status=1
vm_check_exit fork-test-exit fork_test FORK-TEST || status=1
vm_check_modules || status=1
vm_check_no_skips || status=1
vm_check_drivers 'ecb(aes)=ecb-aes-ce' 'cbc(aes)=cbc-aes-ce' \
  'cbc(aes)=virtio_crypto_aes_cbc' 'ctr(aes)=ctr-aes-ce' \
  'xts(aes)=xts-aes-ce' 'gcm(aes)=gcm-aes-ce' || status=1
log "afalg states (aesmux info) under each policy"
vm_check_policies '[a-z]+-aes-ce' || status=1
log "where CBC's requests went"
vm_check_device_work || status=1
[ $status = 0 ] || exit 1
echo "arm64 afalg VM suite passed"
