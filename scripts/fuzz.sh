#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# The fuzzers of tests/fuzz/ (aesmux against OpenSSL's default provider;
# aesmux's configuration parsers), for as long as you like. Builds
# build-fuzz/ with clang first.
#
#   scripts/fuzz.sh                         # each target for 10 minutes
#   scripts/fuzz.sh --seconds 3600 --target sequence --jobs 2
#   scripts/fuzz.sh --replay                # the seed corpus only
#   scripts/fuzz.sh --module other/aesmux.so   # another build's module
#   scripts/fuzz.sh -- -dict=my.dict       # more libFuzzer options
#
# New inputs and findings go to build-fuzz/tests/fuzz/<target>/; a finding
# is printed as the operations it ran (AESMUX_FUZZ_TRACE=1 replays one).
# Keep a finding as tests/fuzz/corpus/<target>/regression-<what-it-found>.
set -euo pipefail
source "$(dirname "$0")/common.sh"

seconds=600 targets=(sequence params engine settings stats_file) replay=0 jobs=1 extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --target) targets=("$2"); shift 2 ;;
    --replay) replay=1; shift ;;
    --module) export AESMUX_TEST_MODULE=$(realpath "$2"); shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--seconds N] [--target sequence|params|engine|settings|stats_file] [--replay]" \
            "[--module PATH] [--jobs N] [-- libFuzzer options]" >&2
       exit 2 ;;
  esac
done

install_deps
fuzz_build=${AESMUX_FUZZ_BUILD:-$AESMUX_ROOT/build-fuzz}
CC=clang-14 CXX=clang++-14 build_in "$fuzz_build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAESMUX_FUZZ=ON -- fuzzers

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
for target in "${targets[@]}"; do
  fuzzer=$fuzz_build/tests/fuzz/${target}_fuzzer
  seeds=$AESMUX_ROOT/tests/fuzz/corpus/$target
  if [ "$replay" = 1 ]; then
    log "$target: the seed corpus"
    "$fuzzer" -runs=0 "$seeds"
    continue
  fi
  work=$fuzz_build/tests/fuzz/$target
  mkdir -p "$work/corpus"
  log "$target: fuzzing for $seconds s with $jobs job(s) (corpus $work/corpus)"
  fork=()
  [ "$jobs" -gt 1 ] && fork=(-fork="$jobs" -ignore_crashes=1)
  "$fuzzer" "${fork[@]}" -max_total_time="$seconds" -timeout=30 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/" \
    "${extra[@]}" "$work/corpus" "$seeds" || status=$?
  for finding in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
    [ -e "$finding" ] || continue
    echo "== finding $finding; its operations:"
    AESMUX_FUZZ_TRACE=1 "$fuzzer" "$finding" 2>&1 | grep -E '^op|MISMATCH' || true
  done
  [ "${status:-0}" -eq 0 ] || exit "$status"
done
