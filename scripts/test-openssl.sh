#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# aesmux on one OpenSSL series built from Debian's source package
# (scripts/openssl-build.sh; cached outside the clone):
#   openssl   build that OpenSSL (once per machine);
#   aesmux    build aesmux against its headers and libraries in
#             build-ossl<series>/ (without link-time optimisation, only the
#             targets the suites need);
#   suites    aesmux's suites labelled `versions` (EVP known answers,
#             Wycheproof, differential, contract and TLS records,
#             re-initialisation, the pipeline, opaque keys, the ENGINE and
#             `openssl -engine aesmux` with that version's command) on
#             that libcrypto and its default provider, under the widest
#             kernel tier this CPU has and without kernels;
#             openssl_version_test fails unless the library the tests run
#             on is the one they were built against;
#   programs  that version's own evp_test (AES files), ssl_test, sslapitest
#             and recordlentest with aesmux preferred (evp_test also
#             required), at parity with the default provider alone
#             (tests/openssl/openssl_tests.py).
# With no step given, all four in order. (The system's 3.0 runs every suite
# in test.sh's main stages.)
#
# usage: scripts/test-openssl.sh SERIES [STEP...] [-- ctest options...]
set -euo pipefail
source "$(dirname "$0")/common.sh"

series=${1:?usage: $0 SERIES [openssl|aesmux|suites|programs...] [-- ctest options]}
shift
[ -n "${AESMUX_OPENSSL_PIN[$series]:-}" ] ||
  { echo "unknown OpenSSL series $series (known: ${AESMUX_OPENSSL_SERIES[*]})" >&2; exit 2; }
steps=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do steps+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
[ ${#steps[@]} -gt 0 ] || steps=(openssl aesmux suites programs)

install_deps dpkg-dev perl python3
build_dir=$AESMUX_ROOT/build-ossl${series/./}

# The targets of the suites labelled `versions` (and the modules they load).
version_targets=(aesmux aesmux_engine openssl_version_test kat_test
                 wycheproof_test differential_test contract_test reinit_test
                 pipeline_test evp_pipeline_test skey_test engine_test
                 engine_kat_test engine_differential_test
                 engine_wycheproof_test default_except tier_list)

for step in "${steps[@]}"; do
  start=$SECONDS
  case $step in
    openssl)
      dir=$(openssl_build "$series")
      "$dir/src/apps/openssl" version -a | sed -n '1p;/^built on/p;/^OPENSSLDIR/p'
      ;;
    aesmux)
      dir=$(openssl_build "$series")
      # Configured again whenever the OpenSSL it was configured for moved.
      if [ ! -f "$build_dir/build.ninja" ] ||
         ! grep -qxF "OPENSSL_ROOT_DIR:PATH=$dir/prefix" "$build_dir/CMakeCache.txt"; then
        rm -rf "$build_dir"
        log "configuring $build_dir against $dir/prefix"
        cmake -S "$AESMUX_ROOT" -B "$build_dir" -G Ninja \
          "${AESMUX_TEST_BUILD_FLAGS[@]}" \
          -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF \
          -DOPENSSL_ROOT_DIR:PATH="$dir/prefix" | grep 'aesmux:'
      fi
      log "building aesmux in $build_dir"
      cmake --build "$build_dir" --target "${version_targets[@]}"
      ;;
    suites)
      dir=$(openssl_build "$series")
      # The suites parameterised by kernel configuration run under the
      # widest tier this CPU has and without kernels ("none"), not under
      # every tier and routing variant: the kernels are the same on every
      # OpenSSL (test.sh's main stage runs them all on 3.0), what changes
      # is the libcrypto around them.
      tiers=$("$build_dir/tests/kernels/tier_list")
      widest=$(awk '$2 == "yes" { print $1; exit }' <<<"$tiers")
      others=$(awk -v w="$widest" '$1 != w { printf "|%s", $1 }' <<<"$tiers")
      narrower="^Kernels/.*_route64"
      [ -z "$others" ] || narrower+="|^Kernels/.*/(${others#|})(_|\$)"
      # The command-line ENGINE test runs that version's openssl.
      PATH=$dir/src/apps:$PATH ctest --test-dir "$build_dir" \
        --output-on-failure --output-junit "$build_dir/ctest-junit.xml" \
        --timeout 900 -j "$(nproc)" -L versions -E "$narrower" "$@"
      # Which OpenSSL the suites ran on, as the tests saw it.
      "$build_dir/tests/provider/openssl_version_test" --gtest_brief=1 |
        grep -m2 'OpenSSL' || true
      ;;
    programs)
      dir=$(openssl_build "$series")
      python3 "$AESMUX_ROOT/tests/openssl/openssl_tests.py" \
        --openssl "$dir/src" --module "$build_dir/provider/aesmux.so" \
        --work "$build_dir/openssl-tests"
      ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
  printf '  %s %s: %d s\n' "$series" "$step" $((SECONDS - start))
done
