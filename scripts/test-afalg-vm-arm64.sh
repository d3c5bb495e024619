#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Runs the afalg suite on a real arm64 kernel: Debian 12's
# linux-image-6.1.0-*-arm64 booted under qemu-system-aarch64 -M virt
# -cpu max (TCG), whose AF_ALG offers the kernel's ARMv8 Crypto Extensions
# drivers (*-ce) besides the generic ones, with the binaries of the arm64
# cross build (build-arm64, as test-arm64.sh makes it). As on amd64
# (test-afalg-vm.sh, whose structure afalg-vm-common.sh shares), the suites
# force the afalg path or keep the default (afalg = auto); `aesmux info` shows
# each family's state under both policies. Fails if a module does not load,
# if an algorithm lacks its Crypto Extensions driver, if a policy does not
# do what it should with them (auto: off, CPU software; force: on, on the
# Crypto Extensions driver), or if a test fails or skips (the guest has all
# the suite needs). fork_test runs there too: forks on a real kernel.
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

install_arm64_deps qemu-system-arm cpio
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
  aes-neon-blk aes-neon-bs
build=$AESMUX_ARM64_BUILD
vm_add_binaries "$build/tests/afalg/afalg_test" \
  "$build/tests/afalg/afalg_bench" "$build/provider/aesmux.so" \
  "$build/provider/aesmux" "$build/tests/provider/fork_test"

# fork_test too (it also runs under user emulation): forks on a real
# arm64 kernel.
extra=$(cat <<EOF
AESMUX_TEST_MODULE=$build/provider/aesmux.so $build/tests/provider/fork_test \
  --gtest_color=no >/tmp/fork_test.log 2>&1
echo "AFALG-VM: fork-test-exit \$?"
sed 's/^/FORK-TEST: /' /tmp/fork_test.log
for policy in auto force; do
  AESMUX_AFALG=\$policy OPENSSL_MODULES=$build/provider $build/provider/aesmux info |
    sed -n "/^afalg probe per family/,/^\$/ s/^  \([a-z]*\)  */AFALG-VM: policy \$policy \1 /p"
done
EOF
)
if [ $vm_bench = 1 ]; then
  extra+=$(cat <<EOF

for cpu in ce:0 neon:1; do
  [ \${cpu#*:} = 0 ] && unset OPENSSL_armcap || export OPENSSL_armcap=\${cpu#*:}
  $build/tests/afalg/afalg_bench --vs-cpu | sed "s/^/AFALG-VM: bench \${cpu%:*} /"
done
EOF
)
fi
vm_write_init "$build/tests/afalg/afalg_test" "$vm_filter" "$extra"
vm_boot ttyAMA0 qemu-system-aarch64 -M virt -cpu max -smp 2 -m 1024

vm_report_tests

log "afalg states (aesmux info) under each policy"
grep '^AFALG-VM: policy' "$vm/console.txt" | sed 's/^AFALG-VM: policy /  /'
# With only CPU drivers in this kernel, auto must leave every family off
# for that reason, and force must turn every one on, on the best driver.
policy_errors=$(grep '^AFALG-VM: policy' "$vm/console.txt" | awk '
  $3 == "auto" && !/off \(auto\): .*-ce \(CPU software\)$/ { print }
  $3 == "force" && !/on \(force\) from 0 bytes: [a-z]+-aes-ce / { print }
  { n[$3]++ }
  END { if (n["auto"] != 5 || n["force"] != 5) print "expected 5 families under each policy" }')

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
  'ctr(aes)=ctr-aes-ce' 'xts(aes)=xts-aes-ce' 'gcm(aes)=gcm-aes-ce' ||
  status=1
if [ -n "$policy_errors" ]; then
  echo "aesmux's afalg policies did not do what they should:" >&2
  echo "$policy_errors" >&2
  status=1
fi
[ $status = 0 ] || exit 1
echo "arm64 afalg VM suite passed"
