#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Runs one fuzz target for a bounded time, starting from the repository's
# seeds: run_target.sh FUZZER SEEDS WORKDIR [SECONDS]
#
# New inputs go to WORKDIR/corpus and findings to WORKDIR/ (never into the
# repository). $AESMUX_FUZZ_SECONDS, if set, overrides SECONDS (60). Exits
# non-zero on a finding, after printing the input's operations.
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3
seconds=${AESMUX_FUZZ_SECONDS:-${4:-60}}
mkdir -p "$work/corpus"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$seeds" ||
  status=$?
if [ "$status" -ne 0 ]; then
  for finding in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
    [ -e "$finding" ] || continue
    echo "== finding $finding; its operations:"
    AESMUX_FUZZ_TRACE=1 "$fuzzer" "$finding" 2>&1 | grep -E '^op|MISMATCH' || true
  done
fi
exit "$status"
