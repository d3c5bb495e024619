#!/usr/bin/env bash
# Installs what is missing, builds aesmux and runs every test.
set -euo pipefail
source "$(dirname "$0")/common.sh"

install_deps qemu-system-x86 busybox-static cpio
build

log "running the test suites"
ctest --test-dir "$AESMUX_BUILD" --output-on-failure --timeout 900 \
  -j "$(nproc)" "$@"

# The afalg path on a real kernel (this machine's may have no AF_ALG: the
# host suite skips there), booted under qemu.
log "the afalg suite on Debian's kernel under qemu"
"$(dirname "$0")/test-afalg-vm.sh"
