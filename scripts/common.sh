# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Shared by the scripts in this folder and in bench/: dependency
# installation and the build.
# Source it; it defines functions only.

AESMUX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AESMUX_BUILD=${AESMUX_BUILD:-$AESMUX_ROOT/build}

# Debian packages the build (tests included) and scripts/run.sh need.
# Nothing here runs a service. nlohmann-json3-dev (header only, for every
# architecture: the arm64 cross build uses it too) reads the Wycheproof
# vectors; libgmock-dev holds GoogleTest's matchers (headers, which the
# arm64 cross build shares).
AESMUX_PACKAGES=(build-essential cmake ninja-build nasm pkg-config
                 libssl-dev openssl libgtest-dev libgmock-dev liburing-dev
                 nlohmann-json3-dev)
# What only the tests need, installed by scripts/test.sh: the integration
# tests run nginx, OpenSSH and Python's ssl module against aesmux (Debian
# starts the nginx and ssh services when it installs them), the afalg
# suite boots a kernel under qemu, the constant-time checks run under
# valgrind, the fuzz targets are built with clang 14 and its libFuzzer
# and sanitizer runtimes, gdb prints the stacks of a forked test child
# that hangs, rsvg-convert renders aesmux calibrate's plot (in DejaVu
# Sans, whose widths the plot's layout assumes) for the command's tests,
# and ccache keeps the compiled objects of test.sh's builds between runs.
AESMUX_TEST_PACKAGES=(nginx-light curl openssh-server openssh-client python3 lintian
                      qemu-system-x86 busybox-static cpio valgrind
                      clang-14 libclang-rt-14-dev gdb
                      librsvg2-bin fonts-dejavu-core ccache)

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
  build_in "$AESMUX_ARM64_BUILD" "${AESMUX_TEST_BUILD_FLAGS[@]}" \
    -DCMAKE_TOOLCHAIN_FILE="$AESMUX_ROOT/cmake/aarch64-linux-gnu.cmake" "$@"
}

# Sends every compiler call of the builds configured from here on through
# ccache, when it is installed. Paths are taken relative to the checkout,
# so that another clone on the same machine (a CI run) reuses the objects
# of an earlier one and recompiles only what changed.
use_compiler_cache() {
  command -v ccache >/dev/null || return 0
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$AESMUX_ROOT CCACHE_NOHASHDIR=1
}

# The cmake options of the builds made only to run tests (all but
# $AESMUX_BUILD and the benchmarks' builds): optimised like the main build,
# with line tables instead of full debug information (-g1). A backtrace
# still names functions, files and lines, and the test programs' C++
# compiles in about two thirds of the time.
AESMUX_TEST_BUILD_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")

# Configures (once) and builds into $AESMUX_BUILD.
build() {
  build_in "$AESMUX_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
}

# build_in DIR [cmake options...] [-- TARGET...]: configures DIR once, then
# builds it (only the TARGETs, when named).
build_in() {
  local dir=$1 options=() targets=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do options+=("$1"); shift; done
  if [ $# -gt 0 ]; then shift; targets=("$@"); fi
  log "building aesmux in $dir${targets[*]:+ (${targets[*]})}"
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$AESMUX_ROOT" -B "$dir" -G Ninja "${options[@]}"
  fi
  cmake --build "$dir" ${targets[@]:+--target "${targets[@]}"}
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

# openssl speed's bytes per second for one algorithm and size (on the
# OpenSSL and build bench_build chose, if it ran):
# speed_bps PROVIDER ALG BYTES SECONDS [extra speed flags...]
speed_bps() {
  local provider=$1 alg=$2 bytes=$3 seconds=$4
  shift 4
  local args=(-provider default)
  if [ "$provider" = aesmux ]; then
    args=(-provider-path "${bench_dir:-$AESMUX_BUILD}/provider" -provider aesmux
          -provider default -propquery provider=aesmux)
  else
    args+=(-propquery provider=default)
  fi
  OPENSSL_CONF=/dev/null "${bench_openssl:-openssl}" speed "${args[@]}" -evp "$alg" \
    -bytes "$bytes" -seconds "$seconds" -mr "$@" 2>/dev/null |
    awk -F: '/^\+F:/ { print $4 }' | tail -n 1
}

# speed_spec SPEC: a benchmark's algorithm spec ("aes-128-cbc-decrypt") as
# `openssl speed` takes it: sets alg (without the "-decrypt") and flags
# (-decrypt, or nothing).
speed_spec() {
  alg=${1%-decrypt}
  flags=()
  if [ "$alg" != "$1" ]; then flags=(-decrypt); fi
}

# bench_build SERIES NAME [CMAKE OPTIONS...] [-- TARGETS...]: aesmux built
# with LTO against OpenSSL SERIES for a benchmark: 3.0 is the system's,
# 3.5 and 3.6 the builds of the test stages (openssl_build). Sets
# bench_dir (build-NAME-ossl<series>/; the system's 3.0 without options is
# $AESMUX_BUILD) and bench_openssl (that series' openssl command), which
# speed_bps uses.
bench_build() {
  local series=$1 name=$2 prefix options=() targets=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do options+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  targets=("$@")
  bench_openssl=openssl
  if [ "$series" = 3.0 ] && [ ${#options[@]} -eq 0 ]; then
    bench_dir=$AESMUX_BUILD
  else
    bench_dir=$AESMUX_ROOT/build-$name-ossl${series/./}
  fi
  if [ "$series" != 3.0 ]; then
    prefix=$(openssl_build "$series")
    options+=(-DOPENSSL_ROOT_DIR:PATH="$prefix/prefix")
    bench_openssl=$prefix/src/apps/openssl
  fi
  if [ ! -f "$bench_dir/build.ninja" ]; then
    log "configuring $bench_dir" >&2
    cmake -S "$AESMUX_ROOT" -B "$bench_dir" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "${options[@]}" >/dev/null
  fi
  cmake --build "$bench_dir" ${targets[@]:+--target "${targets[@]}"} >/dev/null
}

# The median of numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# bench_match_tier: where AESMUX_KERNELS holds aesmux to a lower tier than
# the CPU's best, the default provider it is measured against must run on
# the same CPU: OPENSSL_ia32cap (unless already set) hides from libcrypto
# what that tier goes without (aesni: AVX-512, VAES and VPCLMULQDQ;
# vaes_avx2: AVX-512), so OpenSSL 3.5's and 3.6's AVX-512 XTS and GCM
# stand aside as they would on such a CPU. The second word is CPUID leaf
# 7's EBX (AVX512F, DQ, IFMA, PF, ER, CD, BW, VL) and ECX (VBMI, VBMI2,
# VNNI, BITALG, VPOPCNTDQ; VAES and VPCLMULQDQ); OpenSSL 3.4 and later
# clear the words after it.
bench_match_tier() {
  [ -z "${OPENSSL_ia32cap:-}" ] || return 0
  case ${AESMUX_KERNELS:-} in
    aesni) export OPENSSL_ia32cap='~0:~0x5e42dc230000' ;;
    vaes_avx2) export OPENSSL_ia32cap='~0:~0x5842dc230000' ;;
  esac
}

# The first lines of a benchmark table: date, CPU, cores, OpenSSL, the
# kernel tier aesmux chooses (on what bench_build chose, if it ran) and
# what libcrypto is told of the CPU (bench_match_tier).
bench_header() {
  local cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
  local dir=${bench_dir:-$AESMUX_BUILD}
  echo "# $(date -u +%Y-%m-%d) · $cpu · $(nproc) cores · $("${bench_openssl:-openssl}" version)"
  echo "# aesmux tier: $(OPENSSL_CONF=/dev/null OPENSSL_MODULES="$dir/provider" "$dir/provider/aesmux" info | sed -n 's/^tier in use *//p')"
  echo "# libcrypto's CPU: ${OPENSSL_ia32cap:+OPENSSL_ia32cap=}${OPENSSL_ia32cap:-as found}"
}

# ---------------------------------------------------------------------------
# OpenSSL versions other than the system's (scripts/openssl-build.sh,
# scripts/test-openssl.sh): each built from Debian's source package, once
# per machine, into a cache outside the clone keyed by the package version.

# The OpenSSL series CI tests besides the system's 3.0, each from one Debian
# source package: 3.5 LTS from Debian 13 (trixie), 3.6 from unstable (sid).
# Where the mirror no longer serves the pinned version, the newest of the
# series it does serve is used, and said.
AESMUX_OPENSSL_SERIES=(3.5 3.6)
declare -A AESMUX_OPENSSL_PIN=([3.5]=3.5.7-1~deb13u2 [3.6]=3.6.3-1)
# (~ is the home directory from the user database where HOME is unset.)
AESMUX_TEST_OPENSSL_CACHE=${AESMUX_TEST_OPENSSL_CACHE:-${XDG_CACHE_HOME:-~/.cache}/aesmux}

# apt-get and apt-cache on a private list of Debian source suites (in the
# cache, not in /etc/apt: the system's package lists stay as they are).
# Debian 12's debian-archive-keyring holds the keys that sign trixie and
# (with trixie's) sid. The indexes' signatures are checked, not their
# Valid-Until: a mirror (or a snapshot of one) may serve a sid index past
# it, which apt would refuse whole, and with it the pinned 3.6 source,
# which it still checks against that signed index. Only test builds come
# from these sources.
openssl_apt() {
  local tool=$1 dir=$AESMUX_TEST_OPENSSL_CACHE/apt
  shift
  "$tool" -o Dir::Etc::SourceList="$dir/sources.sources" \
    -o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists="$dir/lists" \
    -o Dir::Cache="$dir/cache" -o APT::Sandbox::User="$(id -un)" \
    -o Acquire::Check-Valid-Until=false "$@"
}

# Writes the private source list and fetches its indexes (once a day).
openssl_apt_update() {
  local dir=$AESMUX_TEST_OPENSSL_CACHE/apt suite uri
  mkdir -p "$dir/lists/partial" "$dir/cache"
  {
    for suite in "trixie trixie-updates|debian" "trixie-security|debian-security" \
                 "sid|debian"; do
      uri=${suite#*|}
      printf 'Types: deb-src\nURIs: http://deb.debian.org/%s\nSuites: %s\n' \
        "$uri" "${suite%|*}"
      printf 'Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n'
    done
  } >"$dir/sources.sources.new"
  # Again when the list changed, or any of its suites' indexes is missing
  # (an update that failed for one) or a day old.
  local suites
  suites=$(sed -n 's/^Suites: //p' "$dir/sources.sources.new" | wc -w)
  if ! cmp -s "$dir/sources.sources.new" "$dir/sources.sources" ||
     [ "$(find "$dir/lists" -maxdepth 1 -name '*_source_Sources*' -mtime -1 |
          wc -l)" -lt "$suites" ]; then
    mv "$dir/sources.sources.new" "$dir/sources.sources"
    log "fetching Debian's source indexes (trixie, sid) into $dir" >&2
    openssl_apt apt-get -q update >/dev/null
  else
    rm -f "$dir/sources.sources.new"
  fi
}

# The directory of a built OpenSSL package version: src/ (the unpacked and
# built source tree, its test programs in src/test/) and prefix/ (headers,
# libraries and pkg-config files, for aesmux's build). Its file `complete`
# holds the recipe it was built with (openssl_recipe).
openssl_dir() { echo "$AESMUX_TEST_OPENSSL_CACHE/openssl-$1"; }
openssl_built() {
  [ "$(cat "$(openssl_dir "$1")/complete" 2>/dev/null)" = "$(openssl_recipe)" ]
}

# Prints the Debian package version of SERIES to use: the pinned one when
# it is built or can be fetched, else the newest of the series that the
# mirror serves (fetching it into the cache's sources/).
openssl_pick_version() {
  local series=$1 pin=${AESMUX_OPENSSL_PIN[$1]} version
  if openssl_built "$pin"; then echo "$pin"; return 0; fi
  openssl_apt_update
  for version in "$pin" $(openssl_apt apt-cache showsrc openssl |
      sed -n 's/^Version: //p' | grep "^$series\." | sort -urV); do
    if openssl_built "$version" || openssl_fetch "$version"; then
      [ "$version" = "$pin" ] ||
        echo "note: the mirror does not serve openssl $pin; using $version" >&2
      echo "$version"
      return 0
    fi
  done
  echo "no source package of OpenSSL $series could be fetched" >&2
  return 1
}

# Downloads the source package VERSION into the cache (apt checks it
# against the signed index); fails if the mirror does not serve all of it.
openssl_fetch() {
  local version=$1 dir=$AESMUX_TEST_OPENSSL_CACHE/sources/$1
  [ -f "$dir/fetched" ] && return 0
  mkdir -p "$dir"
  (cd "$dir" && openssl_apt apt-get -q source --download-only \
     "openssl=$version" >/dev/null 2>"$dir/fetch.log") || return 1
  touch "$dir/fetched"
}

# What openssl_build_tree builds: the test programs aesmux's OpenSSL stages
# run (and what they link), and the ENGINE sslapitest's pipelining test
# loads.
AESMUX_OPENSSL_TARGETS=(apps/openssl test/evp_test test/ssl_test
                        test/sslapitest test/recordlentest engines/dasync.so)

# Debian's configuration (debian/rules) without FIPS, zlib, zstd and the
# legacy provider, none of which the stages test; a run path to prefix/lib,
# so that the programs and anything linked against prefix/lib load these
# libraries. `./Configure` gets these and --prefix and --openssldir.
AESMUX_OPENSSL_CONFIGURE=(debian-amd64 shared no-legacy no-idea no-mdc2
  no-rc5 no-ssl3 no-ssl3-method enable-rfc3779 enable-cms no-capieng
  no-rdrand enable-ec_nistp_64_gcc_128 --libdir=lib)

# What a build's `complete` file must hold for the build to be reused: a
# change of configuration builds the tree again from its source, a change of
# targets only makes what is missing.
openssl_recipe() {
  echo "configure ${AESMUX_OPENSSL_CONFIGURE[*]}; make ${AESMUX_OPENSSL_TARGETS[*]}"
}

# Unpacks (with Debian's patches) and configures VERSION into openssl_dir,
# unless it is configured the same way already, then builds libcrypto and
# libssl (shared, and static for sslapitest) and the targets above, and
# installs the headers and libraries into prefix/: compiled as Debian
# compiles its package (its configuration target and build flags, without
# debug information).
openssl_build_tree() {
  local version=$1 dir configure
  dir=$(openssl_dir "$version")
  configure="${AESMUX_OPENSSL_CONFIGURE[*]}"
  rm -f "$dir/complete"
  if [ "$(cat "$dir/configured" 2>/dev/null)" != "$configure" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    log "building OpenSSL $version in $dir" >&2
    dpkg-source --no-check -x "$AESMUX_TEST_OPENSSL_CACHE/sources/$version"/openssl_*.dsc \
      "$dir/src" >/dev/null || return 1
  else
    log "building what is missing of OpenSSL $version in $dir" >&2
  fi
  local jobs
  jobs=$(nproc)
  # (Each step chained with &&: set -e does not apply in a subshell whose
  # status is tested.)
  (
    cd "$dir/src" &&
    if [ ! -f "$dir/configured" ]; then
      CFLAGS=$(DEB_CFLAGS_MAINT_STRIP=-g dpkg-buildflags --get CFLAGS) \
      LDFLAGS="$(dpkg-buildflags --get LDFLAGS) -Wl,-rpath,$dir/prefix/lib" \
        ./Configure "${AESMUX_OPENSSL_CONFIGURE[@]}" --prefix="$dir/prefix" \
          --openssldir="$dir/prefix/ssl" >"$dir/configure.log" 2>&1 &&
      echo "$configure" >"$dir/configured"
    fi &&
    make -j"$jobs" build_generated >>"$dir/build.log" 2>&1 &&
    make -j"$jobs" libcrypto.so libssl.so >>"$dir/build.log" 2>&1 &&
    openssl_reuse_shared_objects &&
    make -j"$jobs" libcrypto.a libssl.a "${AESMUX_OPENSSL_TARGETS[@]}" \
      >>"$dir/build.log" 2>&1 &&
    make install_dev >>"$dir/build.log" 2>&1
  ) || { echo "building OpenSSL $version failed: see $dir/*.log" >&2; return 1; }
  openssl_recipe >"$dir/complete"
}

# OpenSSL compiles every library source twice, once for the shared library
# (lib*-shlib-*.o) and once for the static one (lib*-lib-*.o). Where the
# Makefile gives both the same command (on Linux both are position
# independent), the static library's object is made a link to the shared
# library's, which is newer than its source: make compiles only the rest.
openssl_reuse_shared_objects() {
  local shared static
  while read -r shared static; do
    [ -e "$static" ] || [ ! -e "$shared" ] || ln "$shared" "$static"
  done < <(awk '
    /^[^ \t#]+lib(crypto|ssl)-(sh)?lib-[^ ]+\.o:/ {
      target = $1; sub(/:$/, "", target)
      getline command; gsub(/-shlib-/, "-lib-", command)
      if (target ~ /-shlib-/) shared[target] = command
      else static[target] = command
    }
    END {
      for (o in static) {
        s = o; sub(/-lib-/, "-shlib-", s)
        if ((s in shared) && shared[s] == static[o]) print s, o
      }
    }' Makefile)
}

# Builds OpenSSL SERIES unless it is cached (under a lock: CI runs on the
# same machine share the cache); prints its directory.
openssl_build() {
  local series=$1 version dir lock
  mkdir -p "$AESMUX_TEST_OPENSSL_CACHE"
  exec {lock}>"$AESMUX_TEST_OPENSSL_CACHE/openssl-$series.lock"
  flock "$lock"
  version=$(openssl_pick_version "$series") &&
    { openssl_built "$version" || openssl_build_tree "$version" >&2; } &&
    dir=$(openssl_dir "$version")
  local status=$?
  exec {lock}>&-
  [ $status -eq 0 ] && echo "$dir"
}
