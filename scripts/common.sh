# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Shared by the scripts in this folder: dependency installation and the build.
# Source it; it defines functions only.

AESMUX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AESMUX_BUILD=${AESMUX_BUILD:-$AESMUX_ROOT/build}

# Debian packages the build (tests included) and scripts/run.sh need.
# Nothing here runs a service. nlohmann-json3-dev (header only, for every
# architecture: the arm64 cross build uses it too) reads the Wycheproof
# vectors.
AESMUX_PACKAGES=(build-essential cmake ninja-build nasm pkg-config
                 libssl-dev openssl libgtest-dev liburing-dev
                 nlohmann-json3-dev)
# What only the tests need, installed by scripts/test.sh: the integration
# tests run nginx, OpenSSH and Python's ssl module against aesmux (Debian
# starts the nginx and ssh services when it installs them), the afalg
# suite boots a kernel under qemu, the constant-time checks run under
# valgrind, the fuzz targets are built with clang 14 and its libFuzzer
# and sanitizer runtimes, gdb prints the stacks of a forked test child
# that hangs, and rsvg-convert renders aesmux calibrate's plot (in DejaVu
# Sans, whose widths the plot's layout assumes) for the command's tests.
AESMUX_TEST_PACKAGES=(nginx-light curl openssh-server openssh-client python3 lintian
                      qemu-system-x86 busybox-static cpio valgrind
                      clang-14 libclang-rt-14-dev gdb
                      librsvg2-bin fonts-dejavu-core)

log() { printf '\n==> %s\n' "$*"; }

# Installs whatever of AESMUX_PACKAGES (plus "$@") is missing.
install_deps() {
  local missing=() pkg
  for pkg in "${AESMUX_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
      missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" ||
    { "${sudo[@]}" apt-get update && \
      "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; }
}

# The arm64 cross build (test-arm64.sh, test-afalg-vm-arm64.sh): Debian's
# cross toolchain, the arm64 development packages through multiarch, and
# qemu's user emulation, which runs the arm64 test programs here.
AESMUX_ARM64_BUILD=${AESMUX_ARM64_BUILD:-$AESMUX_ROOT/build-arm64}

install_arm64_deps() {
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    log "adding the arm64 architecture (multiarch)"
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    "${sudo[@]}" dpkg --add-architecture arm64
    "${sudo[@]}" apt-get update >/dev/null
  fi
  install_deps g++-aarch64-linux-gnu qemu-user-static libssl-dev:arm64 \
    liburing-dev:arm64 libgtest-dev:arm64 libstdc++6:arm64 "$@"
}

# Configures (once) and builds the arm64 cross build.
build_arm64() {
  build_in "$AESMUX_ARM64_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_TOOLCHAIN_FILE="$AESMUX_ROOT/cmake/aarch64-linux-gnu.cmake" "$@"
}

# Configures (once) and builds into $AESMUX_BUILD.
build() {
  build_in "$AESMUX_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
}

# build_in DIR [cmake options...]: configures DIR once, then builds it.
build_in() {
  local dir=$1
  shift
  log "building aesmux in $dir"
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$AESMUX_ROOT" -B "$dir" -G Ninja "$@"
  fi
  cmake --build "$dir"
}

# Writes an openssl.cnf that loads the built aesmux next to the default
# provider and prefers aesmux; prints its path. Extra arguments are lines
# of aesmux's section.
write_test_config() {
  local cnf="$AESMUX_BUILD/aesmux-test.cnf" line
  {
    echo "config_diagnostics = 1"
    echo "openssl_conf = openssl_init"
    echo "[openssl_init]"
    echo "providers = provider_sect"
    echo "alg_section = evp_properties"
    echo "[provider_sect]"
    echo "default = default_sect"
    echo "aesmux = aesmux_sect"
    echo "[default_sect]"
    echo "activate = 1"
    echo "[aesmux_sect]"
    echo "module = $AESMUX_BUILD/provider/aesmux.so"
    echo "activate = 1"
    for line in "$@"; do echo "$line"; done
    echo "[evp_properties]"
    echo "default_properties = ?provider=aesmux"
  } >"$cnf"
  echo "$cnf"
}

# openssl speed's bytes per second for one algorithm and size:
# speed_bps PROVIDER ALG BYTES SECONDS [extra speed flags...]
speed_bps() {
  local provider=$1 alg=$2 bytes=$3 seconds=$4
  shift 4
  local args=(-provider default)
  if [ "$provider" = aesmux ]; then
    args=(-provider-path "$AESMUX_BUILD/provider" -provider aesmux
          -provider default -propquery provider=aesmux)
  else
    args+=(-propquery provider=default)
  fi
  OPENSSL_CONF=/dev/null openssl speed "${args[@]}" -evp "$alg" \
    -bytes "$bytes" -seconds "$seconds" -mr "$@" 2>/dev/null |
    awk -F: '/^\+F:/ { print $4 }' | tail -n 1
}

# The median of numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# The first lines of a benchmark table: date, CPU, cores, OpenSSL and the
# kernel tier aesmux chooses.
bench_header() {
  local cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
  echo "# $(date -u +%Y-%m-%d) · $cpu · $(nproc) cores · $(openssl version)"
  echo "# aesmux tier: $(OPENSSL_CONF=/dev/null OPENSSL_MODULES="$AESMUX_BUILD/provider" "$AESMUX_BUILD/provider/aesmux" info | sed -n 's/^tier in use *//p')"
}
