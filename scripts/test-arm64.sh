#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# aesmux on arm64, tested from this x86-64 machine: installs Debian's cross
# toolchain and the arm64 development packages (multiarch), cross-builds
# aesmux and its tests into build-arm64 (cmake/aarch64-linux-gnu.cmake:
# no kernels, no multi-buffer lanes; the afalg and fallback paths), runs
# the suites of that build (provider, EVP, configuration) under
# qemu-aarch64 user emulation and prints each skipped test with its reason,
# then the afalg suite on Debian's arm64 kernel under qemu-system-aarch64
# (test-afalg-vm-arm64.sh). Exits non-zero if anything failed.
#
# usage: scripts/test-arm64.sh [--no-vm] [--bench] [ctest options...]
#   --no-vm   leave out the arm64 kernel under qemu-system-aarch64
#   --bench   with the VM's benchmark (afalg path against OpenSSL's code)
set -euo pipefail
source "$(dirname "$0")/common.sh"

vm=1 bench=--no-bench
while [ $# -gt 0 ]; do
  case $1 in
    --no-vm) vm=0; shift ;;
    --bench) bench=; shift ;;
    *) break ;;
  esac
done

stage_start=$(date +%s)
install_arm64_deps
build_arm64

# afalg_test (label afalg) needs AF_ALG and io_uring from the kernel: qemu's
# user emulation has no io_uring, so it runs on the arm64 kernel below.
log "the arm64 suites under qemu-aarch64 (user emulation), but afalg_test"
echo "  afalg_test: qemu-aarch64 emulates no io_uring; it runs on the arm64 kernel below"
suites_start=$(date +%s)
status=0
ctest --test-dir "$AESMUX_ARM64_BUILD" --output-on-failure --timeout 1800 \
  -j "$(nproc)" -LE afalg "$@" || status=1
echo "  took $(( $(date +%s) - suites_start )) s"

# What each skipped test said, grouped by reason.
log "skipped under qemu-aarch64, and why"
awk '/: Skipped$/ { getline reason; pending = 1; next }
     pending && /^\[  SKIPPED \] / { print reason "\t" $4; pending = 0 }' \
  "$AESMUX_ARM64_BUILD/Testing/Temporary/LastTest.log" | sort |
  awk -F'\t' '{ names[$1] = names[$1] " " $2; count[$1]++ }
              END { for (r in names) printf "%d: %s\n   %s\n", count[r], r, names[r] }' |
  fold -s -w 100 | sed 's/^/  /'

if [ $vm = 1 ]; then
  log "the afalg suite on Debian's arm64 kernel under qemu-system-aarch64"
  "$(dirname "$0")/test-afalg-vm-arm64.sh" $bench || status=1
fi
echo "arm64 stage took $(( $(date +%s) - stage_start )) s"
[ $status = 0 ] || { echo "arm64 tests failed" >&2; exit 1; }
echo "arm64 tests passed"
