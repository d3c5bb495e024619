#!/usr/bin/env bash
# Installs what is missing, builds aesmux and runs every test: the unit,
# EVP, command-line and integration suites on the normal build, the afalg
# suite on Debian's kernel under qemu, the unit and EVP suites again under
# AddressSanitizer and UBSan, and the threaded suites under ThreadSanitizer.
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

sanitize_build=${AESMUX_SANITIZE_BUILD:-$AESMUX_ROOT/build-sanitize}
build_in "$sanitize_build" -DCMAKE_BUILD_TYPE=Debug -DAESMUX_SANITIZE=ON
log "running the suites under AddressSanitizer and UBSan"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir "$sanitize_build" --output-on-failure --timeout 1800 \
  -j "$(nproc)" "$@"

# The suites that run requests from many threads at once (batching, the
# per-thread statistics, forks while threads encrypt, ASYNC jobs abandoned
# and freed from other threads), again under ThreadSanitizer.
tsan_build=${AESMUX_TSAN_BUILD:-$AESMUX_ROOT/build-tsan}
build_in "$tsan_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAESMUX_TSAN=ON
log "running the threaded suites under ThreadSanitizer"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir "$tsan_build" --output-on-failure --timeout 1800 \
  -R 'BatchTest|RoutingTest|ForkTest|ForkAfterUnload|AbandonedJobTest' "$@"

