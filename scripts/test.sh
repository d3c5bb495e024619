#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Installs what is missing, builds aesmux and runs every test: the unit,
# EVP, command-line and integration suites on the normal build, the
# provider's core suites in a build without ENGINE support, aesmux's
# suites and OpenSSL's own TLS and EVP test programs on OpenSSL 3.5 and 3.6
# (built from Debian's sources), the constant-time checks under valgrind,
# the afalg suite on Debian's kernel under qemu, the arm64 cross build's
# suites under qemu (user emulation, and Debian's arm64 kernel for the afalg
# suite), the unit and EVP suites again under AddressSanitizer and UBSan,
# the threaded suites under ThreadSanitizer, and the fuzzers for a bounded
# time.
# Ends by printing how long each stage took, the system's OpenSSL release
# and which kernel tiers the suites tested (and which they skipped because this CPU lacks them); fails
# if a tier this CPU runs was not tested (unless ctest options given as
# arguments chose the tests).
set -euo pipefail
source "$(dirname "$0")/common.sh"

# Each stage's wall-clock time, printed at the end (also when a stage
# fails), so that CI time can be watched.
stage_times=()
stage_name='' stage_start=0
stage() {  # stage NAME COMMAND...: runs COMMAND as the stage NAME
  stage_name=$1 stage_start=$SECONDS
  shift
  log "$stage_name"
  "$@"
  stage_times+=("$(printf '%6d s  %s' $((SECONDS - stage_start)) "$stage_name")")
  stage_name=''
}

# Test results (ctest --output-junit) per build, for the tier summary.
junit_files=()
run_ctest() {  # run_ctest BUILD_DIR [ctest options...]
  local dir=$1
  shift
  junit_files+=("$dir/ctest-junit.xml")
  ctest --test-dir "$dir" --output-on-failure --output-junit "$dir/ctest-junit.xml" "$@"
}

# Which kernel tiers the suites ran: the tests whose GoogleTest parameter is
# a tier's name (AllTiers/EcbTest.X/aesni, Kernels/KatTest.Cbc/aesni_route64,
# …) per result, against what tests/kernels/tier_list says this CPU runs.
# "none" (no kernels: every request on the fallback path) runs everywhere.
# Returns non-zero if no test of a tier this CPU runs passed.
tier_summary() {
  local tier_list=$AESMUX_BUILD/tests/kernels/tier_list
  if [ ! -x "$tier_list" ]; then
    echo "  no kernel tiers in this build ($tier_list is not built)"
    return 0
  fi
  TIERS="$("$tier_list"; echo "none yes")" \
    python3 - "${junit_files[@]}" <<'PY'
import os, sys, xml.etree.ElementTree as ET

tiers = []  # (name, runs here, what the CPU lacks)
for line in os.environ["TIERS"].splitlines():
    name, runs, *lacks = line.split()
    tiers.append((name, runs == "yes", " ".join(lacks)))

def tier_of(test_name):
    """The tier a test is parameterised with, or None."""
    param = test_name.split("  #")[0].rsplit("/", 1)
    if len(param) != 2:
        return None
    matches = [t for t, _, _ in tiers
               if param[1] == t or param[1].startswith(t + "_")]
    return max(matches, key=len) if matches else None

def skip_reason(case):
    out = (case.findtext("system-out") or "").splitlines()
    for i, line in enumerate(out):
        if line.endswith(": Skipped") and i + 1 < len(out):
            return out[i + 1].strip()
    return "?"

untested = []
for junit in sys.argv[1:]:
    widest_only = junit.startswith("widest:")
    junit = junit.removeprefix("widest:")
    if not os.path.exists(junit):
        continue
    counts = {t: {"run": 0, "notrun": 0, "fail": 0} for t, _, _ in tiers}
    reasons = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        tier = tier_of(case.get("name"))
        if tier is None:
            continue
        status = case.get("status")
        counts[tier][status if status in ("run", "fail") else "notrun"] += 1
        if status not in ("run", "fail"):
            reasons.setdefault(tier, skip_reason(case))
    print(f"  {os.path.dirname(junit)}:")
    for name, runs, lacks in tiers:
        c = counts[name]
        ran = f"{c['run']} passed" + (f", {c['fail']} failed" if c["fail"] else "")
        skipped = f"{c['notrun']} skipped ({reasons.get(name)})"
        if runs and c["run"] + c["fail"] == 0 and widest_only:
            line = "not run in this build (the widest tier and none only)"
        elif runs and c["run"] + c["fail"] == 0:
            untested.append(name)
            line = f"NOT TESTED, though this CPU runs it: {skipped}"
        elif runs:
            line = "ran: " + ran + (", " + skipped if c["notrun"] else "")
        else:
            line = f"skipped, this CPU lacks {lacks}: {c['notrun']} skipped"
            if c["run"] + c["fail"]:
                line += f", {ran} (they need no {name} kernels)"
        print(f"    {name:<12} {line}")
if untested:
    print("  tiers this CPU runs that the suites did not test: "
          + " ".join(sorted(set(untested))))
    sys.exit(1)
PY
}

report() {
  local status=$?
  if [ -n "$stage_name" ]; then
    stage_times+=("$(printf '%6d s  %s (failed)' $((SECONDS - stage_start)) "$stage_name")")
  fi
  log "stage durations"
  printf '%s\n' "${stage_times[@]}"
  printf '%6d s  in all\n' "$SECONDS"
  # Releases of one series differ in places (docs/differences.md).
  log "the system's OpenSSL, which every stage but 3.5's and 3.6's ran on"
  openssl version
  if [ ${#junit_files[@]} -ne 0 ]; then
    log "kernel tiers tested (test results by tier parameter)"
    if ! tier_summary && [ "$filtered" = 0 ]; then status=1; fi
  fi
  exit "$status"
}
trap report EXIT
filtered=$(( $# > 0 ))

stage "packages (what is missing)" install_deps "${AESMUX_TEST_PACKAGES[@]}"
use_compiler_cache
# A forked test child that hangs has its threads' stacks printed (through
# gdb) before it is killed, so that a rare hang can be read from the log.
export AESMUX_TEST_HUNG_CHILD_STACKS=1

stage "build" build

stage "test suites" run_ctest "$AESMUX_BUILD" --timeout 900 -j "$(nproc)" \
  -LE consttime "$@"

# Kernels and TLS CBC record handling with keys and data marked secret:
# valgrind fails the stage on any branch or address computed from them.
stage "constant time under valgrind" \
  ctest --test-dir "$AESMUX_BUILD" --output-on-failure --timeout 600 \
  -L consttime "$@"

# OpenSSL 4.0 and no-engine builds of 3.x have no ENGINEs: their headers
# define OPENSSL_NO_ENGINE. Defining it here, the build must leave the
# ENGINE out and say so, and the provider alone must pass its known-answer,
# pipeline and configuration suites (only those targets, without link-time
# optimisation: a few minutes).
noengine_build=${AESMUX_NOENGINE_BUILD:-$AESMUX_ROOT/build-noengine}
noengine_suites() {
  if [ ! -f "$noengine_build/build.ninja" ]; then
    mkdir -p "$noengine_build"
    cmake -S "$AESMUX_ROOT" -B "$noengine_build" -G Ninja \
      "${AESMUX_TEST_BUILD_FLAGS[@]}" -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF \
      -DCMAKE_C_FLAGS=-DOPENSSL_NO_ENGINE -DCMAKE_CXX_FLAGS=-DOPENSSL_NO_ENGINE |
      tee "$noengine_build/configure.log"
    grep -q 'building the provider alone' "$noengine_build/configure.log"
  fi
  [ ! -e "$noengine_build/engine_compat" ]
  cmake --build "$noengine_build" --target aesmux kat_test pipeline_test config_test
  run_ctest "$noengine_build" --timeout 900 -j "$(nproc)" \
    -R '^(Kernels/(KatTest|PipelineTest)|LoadSettings|ParseByteCount|SettingNames|ProviderLoad)'
}
stage "the provider without ENGINE support" noengine_suites

# OpenSSL 3.5 and 3.6 (scripts/test-openssl.sh; README, "OpenSSL
# versions"), each built once per machine from Debian's source package into
# ~/.cache/aesmux: aesmux built against it, its suites labelled `versions`
# on that libcrypto, then that version's own test programs (evp_test's AES
# files, ssl_test, sslapitest, recordlentest) with aesmux, at parity with
# the default provider alone.
for series in "${AESMUX_OPENSSL_SERIES[@]}"; do
  stage "OpenSSL $series: build (cached after the first run)" \
    "$(dirname "$0")/test-openssl.sh" "$series" openssl
  stage "OpenSSL $series: aesmux build" \
    "$(dirname "$0")/test-openssl.sh" "$series" aesmux
  # Its suites run the widest tier and "none" only (the kernels do not
  # change with OpenSSL): the summary lists the rest without failing.
  junit_files+=("widest:$AESMUX_ROOT/build-ossl${series/./}/ctest-junit.xml")
  stage "OpenSSL $series: aesmux's suites" \
    "$(dirname "$0")/test-openssl.sh" "$series" suites -- "$@"
  stage "OpenSSL $series: its own tests with aesmux" \
    "$(dirname "$0")/test-openssl.sh" "$series" programs
done

# The afalg path on a real kernel (this machine's may have no AF_ALG: the
# host suite skips there), booted under qemu.
stage "afalg suite on Debian's kernel under qemu" \
  "$(dirname "$0")/test-afalg-vm.sh"

# The build for targets without aesmux's kernels (docs/afalg.md: Arm and other
# architectures), cross-built for arm64 and run under qemu.
stage "arm64 build under qemu" "$(dirname "$0")/test-arm64.sh"

sanitize_build=${AESMUX_SANITIZE_BUILD:-$AESMUX_ROOT/build-sanitize}
# The instrumented builds link without LTO: it would only cost time. Line
# tables (-g1) are all that the sanitizers' reports use.
stage "sanitizer build" \
  build_in "$sanitize_build" -DCMAKE_BUILD_TYPE=Debug -DAESMUX_SANITIZE=ON \
  -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
  -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF
# A test that fails here runs once more: a fork while another thread is in
# malloc can leave ASan's own allocator lock held in the child (GCC 12's
# libasan takes no fork handler for it), and that child then hangs in its
# first allocation, whatever aesmux does (seen once in ForkTest's child).
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  stage "suites under ASan and UBSan" \
  run_ctest "$sanitize_build" --timeout 1800 --repeat until-pass:2 \
  -j "$(nproc)" "$@"

# The suites that run requests from many threads at once (batching, the
# per-thread statistics, forks while threads encrypt, ASYNC jobs abandoned
# and freed from other threads), again under ThreadSanitizer: only their
# programs are built (and the module they load), which on a machine
# without a compiler cache saves compiling the rest of the tree again.
tsan_build=${AESMUX_TSAN_BUILD:-$AESMUX_ROOT/build-tsan}
stage "ThreadSanitizer build" \
  build_in "$tsan_build" "${AESMUX_TEST_BUILD_FLAGS[@]}" -DAESMUX_TSAN=ON \
  -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF -- aesmux batch_test combiner_test \
  routing_test fork_test abandoned_job_test
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  stage "threaded suites under TSan" \
  run_ctest "$tsan_build" --timeout 1800 \
  -R 'BatchTest|Combiner\.|RoutingTest|ForkTest|ForkAfterUnload|AbandonedJobTest' "$@"

# The fuzzers (tests/fuzz/: differential, and aesmux's configuration
# parsers), built with clang in a directory of their own: the seed corpus,
# then each target for AESMUX_FUZZ_SECONDS (default 60).
# scripts/fuzz.sh runs them for longer. Only the fuzzers and what they
# load are built. Each target runs in one process, so as many run at once
# as there are CPUs.
fuzz_build=${AESMUX_FUZZ_BUILD:-$AESMUX_ROOT/build-fuzz}
CC=clang-14 CXX=clang++-14 stage "fuzz build (clang)" \
  build_in "$fuzz_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAESMUX_FUZZ=ON \
  -- fuzzers
stage "fuzzers: the seed corpus, then each for ${AESMUX_FUZZ_SECONDS:-60} s" \
  ctest --test-dir "$fuzz_build" --output-on-failure -L fuzz -j "$(nproc)"
