#!/usr/bin/env bash
# Installs what is missing, builds aesmux and runs every test: the unit,
# EVP, command-line and integration suites on the normal build, the
# provider's core suites in a build without ENGINE support, the afalg
# suite on Debian's kernel under qemu, the unit and EVP suites again under
# AddressSanitizer and UBSan, and the threaded suites under ThreadSanitizer.
set -euo pipefail
source "$(dirname "$0")/common.sh"

install_deps qemu-system-x86 busybox-static cpio
build

log "running the test suites"
ctest --test-dir "$AESMUX_BUILD" --output-on-failure --timeout 900 \
  -j "$(nproc)" "$@"

# OpenSSL 4.0 and no-engine builds of 3.x have no ENGINEs: their headers
# define OPENSSL_NO_ENGINE. Defining it here, the build must leave the
# ENGINE out and say so, and the provider alone must pass its known-answer,
# pipeline and configuration suites. (A few minutes: only those targets,
# without link-time optimisation.)
noengine_build=${AESMUX_NOENGINE_BUILD:-$AESMUX_ROOT/build-noengine}
log "the provider alone, as with an OpenSSL without ENGINEs"
if [ ! -f "$noengine_build/build.ninja" ]; then
  mkdir -p "$noengine_build"
  cmake -S "$AESMUX_ROOT" -B "$noengine_build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF \
    -DCMAKE_C_FLAGS=-DOPENSSL_NO_ENGINE -DCMAKE_CXX_FLAGS=-DOPENSSL_NO_ENGINE |
    tee "$noengine_build/configure.log"
  grep -q 'building the provider alone' "$noengine_build/configure.log"
fi
[ ! -e "$noengine_build/engine_compat" ]
cmake --build "$noengine_build" --target aesmux kat_test pipeline_test config_test
ctest --test-dir "$noengine_build" --output-on-failure --timeout 900 -j "$(nproc)" \
  -R '^(Kernels/(KatTest|PipelineTest)|LoadSettings|ParseByteCount|SettingNames|ProviderLoad)'

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
# per-thread statistics), again under ThreadSanitizer.
tsan_build=${AESMUX_TSAN_BUILD:-$AESMUX_ROOT/build-tsan}
build_in "$tsan_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAESMUX_TSAN=ON
log "running the threaded suites under ThreadSanitizer"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir "$tsan_build" --output-on-failure --timeout 1800 \
  -R 'BatchTest|RoutingTest' "$@"

