#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# The aesmux command on known inputs: `aesmux stats` on fixed statistics
# files and `aesmux info` on a fixed configuration (one setting from each
# origin), both as text and --json, against golden files (machine-specific
# values — OpenSSL's version, CPU features, which tiers this CPU runs — are
# masked first); `aesmux bench` in a short run; `aesmux calibrate --quick`
# on this machine, its calibration file loaded and its plot checked
# (check_calibration.py; check_plot.py renders it with rsvg-convert);
# usage errors (exit status 2, the mistake named with what was meant);
# calibrate's output files never written through a planted link.
#
# usage: aesmux_cli_test.sh BUILD_DIR [EMULATOR...]
#        UPDATE_GOLDEN=1 aesmux_cli_test.sh BUILD_DIR  (rewrites them)
# EMULATOR: how a cross build's programs run here (qemu-aarch64-static).
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
shift
emulator=("$@")
aesmux() { "${emulator[@]}" "$build/provider/aesmux" "$@"; }
# The system's openssl, uninstrumented, loading this build's module: a
# sanitizer build's module needs its ASan runtime loaded first. (ldd fails
# on a cross build's module, which is never a sanitizer build's.)
asan_runtime=$({ ldd "$build/provider/aesmux.so" 2>/dev/null || true; } |
  awk '/libasan/ { print $3 }')
system_openssl() {
  if [ -n "$asan_runtime" ]; then
    LD_PRELOAD=$asan_runtime ASAN_OPTIONS=detect_leaks=0 openssl "$@"
  else
    openssl "$@"
  fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
# Only this test's settings count: nothing from the caller's environment.
while read -r name; do unset "$name"; done < <(env | sed -n 's/^\(AESMUX_[A-Z_]*\)=.*/\1/p')
export OPENSSL_MODULES=$build/provider

# aesmux_cnf FILE [LINE...]: an openssl.cnf that loads this build's aesmux
# with LINEs in its section, next to the default provider.
aesmux_cnf() {
  local file=$1
  shift
  printf 'openssl_conf = init\n[init]\nproviders = providers\n[providers]\n' >"$file"
  printf 'default = default_sect\naesmux = aesmux_sect\n[default_sect]\n' >>"$file"
  printf 'activate = 1\n[aesmux_sect]\nmodule = %s\nactivate = 1\n' \
    "$build/provider/aesmux.so" >>"$file"
  printf '%s\n' "$@" >>"$file"
}

# golden NAME < OUTPUT: compares OUTPUT with golden/NAME (or rewrites it).
# (Not at the end of a pipe: fail must count in this shell.)
golden() {
  local name=$1
  cat >"$work/$name"
  if [ -n "${UPDATE_GOLDEN:-}" ]; then
    cp "$work/$name" "$here/golden/$name"
    pass "$name rewritten"
  elif diff -u "$here/golden/$name" "$work/$name"; then
    pass "$name matches its golden file"
  else
    fail "$name differs from golden/$name (diff above)"
  fi
}

# 1. aesmux stats on fixed files, copied into a directory of this test: a
# master with no requests, two workers, a write under way (left out), the
# summary of five processes that have exited (stats/nginx-summary, put
# under this user's uid) and a file it already absorbed, which a fold that
# stopped half-way left behind. Read under a shared lock of this user's
# lock file (so that no fold runs first), that file must count once,
# through the summary; read without it, the fold removes it and the totals
# stay.
cd "$here"
mkdir "$work/stats"
cp stats/nginx.* "$work/stats/"
cp stats/nginx-summary "$work/stats/nginx.summary.$(id -u)"
cd "$work"
mask_uid() { sed "s/nginx\.summary\.$(id -u)/nginx.summary.@UID@/g"; }
# (Made 0600 by umask: a fold makes a lock others could open 0600.)
folds_off() { (umask 077 && flock -s "stats/nginx.lock.$(id -u)" "$@"); }
golden stats.txt < <(folds_off "${emulator[@]}" "$build/provider/aesmux" \
  stats stats/nginx)
golden stats.json < <(folds_off "${emulator[@]}" "$build/provider/aesmux" \
  stats --json stats/nginx)
golden stats-per-process.txt < <(folds_off "${emulator[@]}" \
  "$build/provider/aesmux" stats \
  --per-process stats/nginx | mask_uid)
golden stats-per-process.json < <(aesmux stats --per-process --json \
  stats/nginx.4101.0a0b0c0d0e0f4101 stats/nginx.4102.0a0b0c0d0e0f4102)
python3 -c 'import json, sys; json.load(open(sys.argv[1])); json.load(open(sys.argv[2]))' \
  "$work/stats.json" "$work/stats-per-process.json" &&
  pass "stats --json is well-formed JSON" || fail "stats --json is not JSON"
if aesmux stats stats/nginx | diff -u "$here/golden/stats.txt" - &&
   [ ! -e stats/nginx.4099.0a0b0c0d0e0f4099 ]; then
  pass "a fold removes a file its summary already counts, counting it once"
else
  fail "the absorbed file was not removed, or was counted again"
fi
printf 'aesmux-stats 2\nprocess 77 0 - 0\nAES-128-GCM simd 1 16\nAES-128-GCM simd one 16\n' >"$work/bad.77"
if aesmux stats "$work/bad.77" 2>"$work/err" >/dev/null; then
  fail "a malformed statistics file was accepted"
else
  grep -q "bad.77:4: not an aesmux statistics file" "$work/err" &&
    pass "a malformed line is refused with file and line" ||
    fail "malformed line: $(cat "$work/err")"
fi
if aesmux stats "$work/none" 2>/dev/null; then
  fail "a prefix without files succeeded"
else
  pass "a prefix without files fails"
fi

# 1b. A directory others write (README suggests /var/tmp/aesmux, mode
# 1777): what another user plants under statistics names (in the names of
# this version and of earlier ones) is never followed, never waited on,
# never read past a bound and never quoted; the good file is still shown.
h=$work/hostile
mkdir "$h"
printf 'SECRET-LINE\n' >"$work/secret"
chmod 600 "$work/secret"
cp "$work/stats/nginx.4101.0a0b0c0d0e0f4101" "$h/s.4101.0a0b0c0d0e0f4101"
for pid in 11 12 13 14; do
  for name in "s.$pid" "s.$pid.0a0b0c0d0e0f00$pid"; do
    case $pid in
      11) mkfifo "$h/$name" ;;
      12) ln -s "$work/secret" "$h/$name" ;;
      13) ln -s /dev/zero "$h/$name" ;;
      14) ln "$work/secret" "$h/$name" ;;
    esac
  done
done
status=0
timeout 20 "${emulator[@]}" "$build/provider/aesmux" stats "$h/s" \
  >"$work/out" 2>"$work/err" || status=$?
if [ "$status" -eq 124 ]; then
  fail "aesmux stats hung on a planted FIFO"
elif grep -q SECRET "$work/out" "$work/err"; then
  fail "aesmux stats quoted a file that is not a statistics file"
elif [ "$status" -ne 1 ] || ! grep -q '^AES-256-GCM  simd  *5320' "$work/out" ||
     [ "$(grep -c "s\.1[1-4]\.0a0b0c0d0e0f001[1-4]: " "$work/err")" -ne 4 ]; then
  fail "planted entries (exit $status): $(cat "$work/out" "$work/err")"
else
  pass "planted FIFO, symlinks and hard link refused, each named, exit 1; the good file shown"
fi

# 1c. Numbers parsed strictly, sums that never wrap, nothing printed raw.
n=$work/num
mkdir "$n"
file() {  # file NAME PID LINE...: a process file with these lines
  local name=$1 pid=$2
  shift 2
  { printf 'aesmux-stats 2\nprocess %s 0 - 0\n' "$pid"; printf '%s\n' "$@"; } >"$n/$name"
}
file minus 21 'AES-128-GCM simd -1 16'
file escape 22 "note 1 $(printf '\033]0;owned\007')"
file half1 23 'AES-128-GCM simd 1 9223372036854775808' 'AES-128-GCM fallback 1 9223372036854775808'
file half2 24 'AES-128-GCM simd 1 9223372036854775808'
for case in "minus:minus:3" "escape:escape:3"; do
  IFS=: read -r label name line <<<"$case"
  status=0
  aesmux stats "$n/$name" >"$work/out" 2>"$work/err" || status=$?
  if [ "$status" -eq 1 ] && grep -q "$name:$line: " "$work/err" &&
     ! grep -q $'\033' "$work/out" "$work/err" && [ ! -s "$work/out" ]; then
    pass "$label: refused with file and line, exit 1"
  else
    fail "$label (exit $status): $(cat -v "$work/out" "$work/err")"
  fi
done
if aesmux stats "$n/half1" | grep -q '^AES-128-GCM  simd  *1  *9223372036854775808  *50.0%$'; then
  pass "shares of a file whose paths' bytes pass 2^64 together"
else
  fail "shares: $(aesmux stats "$n/half1" 2>&1)"
fi
status=0
aesmux stats "$n/half1" "$n/half2" >"$work/out" 2>"$work/err" || status=$?
if [ "$status" -eq 1 ] && grep -q "AES-128-GCM simd passes 2^64-1" "$work/err" &&
   [ ! -s "$work/out" ]; then
  pass "a sum that would pass 2^64-1 is refused, exit 1"
else
  fail "overflowing sum (exit $status): $(cat "$work/out" "$work/err")"
fi
status=0
aesmux stats "$n/s"$'\033[2J' >/dev/null 2>"$work/err" || status=$?
if [ "$status" -eq 1 ] && ! grep -q $'\033' "$work/err" &&
   grep -q 's\\x1b\[2J' "$work/err"; then
  pass "a name with control characters is printed escaped"
else
  fail "escaped name (exit $status): $(cat -v "$work/err")"
fi

# 1d. aesmux stats adds no file of its own, and folds: N processes that
# counted something leave their files, and `aesmux stats` (with the
# stats_file in force) reads them, folds the exited ones and adds nothing.
if [ ${#emulator[@]} -ne 0 ]; then
  # The system's openssl is this machine's; none runs the emulated module.
  echo "skip: processes of the system's openssl counting (no openssl for ${emulator[0]})"
else
  mkdir -m 1777 "$work/own"
  aesmux_cnf "$work/own.cnf" "stats_file = $work/own/s"
  printf '[evp]\ndefault_properties = ?provider=aesmux\n' >>"$work/own.cnf"
  sed -i 's/^providers = providers$/providers = providers\nalg_section = evp/' "$work/own.cnf"
  head -c 4096 /dev/zero >"$work/zeros"
  for i in 1 2 3; do
    OPENSSL_CONF=$work/own.cnf system_openssl enc -aes-128-cbc -nopad \
      -K 000102030405060708090a0b0c0d0e0f -iv 000102030405060708090a0b0c0d0e0f \
      -in "$work/zeros" -out /dev/null
  done
  for i in 1 2 3; do
    OPENSSL_CONF=$work/own.cnf aesmux stats >"$work/own.txt"
  done
  if [ "$(ls "$work/own" | wc -l)" -eq 2 ] && [ -e "$work/own/s.summary.$(id -u)" ] &&
     [ -f "$work/own/s.lock.$(id -u)" ] &&
     head -1 "$work/own.txt" | grep -qx '3 processes' &&
     grep -q '^AES-128-CBC  [a-z]*  *[0-9]*  *12288 ' "$work/own.txt"; then
    pass "three processes folded into one summary beside the lock; aesmux stats added no file"
  else
    fail "the directory after aesmux stats: $(ls "$work/own") $(cat "$work/own.txt")"
  fi
fi

# 1e. This user's summary cut short (as a crash may leave it): the fold
# `aesmux stats` runs first sets it aside, saying so, instead of stopping
# every fold for good; the summary set aside is named, not summed, and
# the exit status is 1 while it is there.
a=$work/aside
mkdir "$a"
printf 'aesmux-stats 2\nsummary 1\nAES-128-GCM simd 1' >"$a/s.summary.$(id -u)"
cp "$work/stats/nginx.4101.0a0b0c0d0e0f4101" "$a/s.4101.0a0b0c0d0e0f4101"
for run in 1 2; do
  status=0
  aesmux stats "$a/s" >"$work/out" 2>"$work/err" || status=$?
  warned=0
  grep -q "warning: s\.summary\.$(id -u) is not a statistics summary (line 0: .*): set aside as s\.summary\.$(id -u)\.bad" \
    "$work/err" && warned=1
  if [ "$status" -eq 1 ] && [ "$warned" -eq $((run == 1)) ] &&
     grep -q "s\.summary\.$(id -u)\.bad: a summary that a fold could not read, set aside" "$work/err" &&
     [ -e "$a/s.summary.$(id -u).bad" ] && grep -q '^AES-256-GCM  simd  *5320' "$work/out"; then
    pass "run $run: an unreadable summary set aside, named, exit 1; the others shown"
  else
    fail "unreadable summary, run $run (exit $status): $(cat "$work/out" "$work/err")"
  fi
done

# 1f. Folds are kept apart by a lock file per user, which nobody else can
# open: a flock on the directory, which anyone may take and hold, keeps no
# fold from running and keeps aesmux stats waiting for nothing. Something
# else under this user's lock name (a FIFO, a symbolic link; another
# user's file: stats_file_test) keeps this user's folds from running: it
# is named, never waited on, and the exit status is 1.
l=$work/locks
uid=$(id -u)
mkdir -m 1777 "$l"
gone() {  # a process file of a process of an earlier boot
  printf 'aesmux-stats 2\nprocess %s 0 00000000-0000-0000-0000-000000000000 1\n' "$1" >"$l/s.$1.0a0b0c0d0e0f00$1"
  printf 'AES-128-GCM simd 1 16\n' >>"$l/s.$1.0a0b0c0d0e0f00$1"
}
gone 31
(exec 9<"$l" && flock -s 9 && exec sleep 600) &
holder=$!
while flock -n -x "$l" true; do sleep 0.05; done  # until it holds it
status=0
timeout 20 "${emulator[@]}" "$build/provider/aesmux" stats "$l/s" \
  >"$work/out" 2>"$work/err" || status=$?
kill "$holder"
wait "$holder" 2>/dev/null || true
if [ "$status" -eq 0 ] && [ ! -s "$work/err" ] && [ ! -e "$l/s.31.0a0b0c0d0e0f0031" ] &&
   [ -e "$l/s.summary.$uid" ] && grep -q '^AES-128-GCM  simd  *1  *16 ' "$work/out"; then
  pass "a flock held on the directory keeps no fold from running"
else
  fail "a flock on the directory (exit $status): $(ls "$l") $(cat "$work/out" "$work/err")"
fi
for what in fifo symlink; do
  rm -f "$l"/s.*
  gone 32
  case $what in
    fifo) mkfifo "$l/s.lock.$uid" ;;
    symlink) ln -s "$work/secret" "$l/s.lock.$uid" ;;
  esac
  status=0
  timeout 20 "${emulator[@]}" "$build/provider/aesmux" stats "$l/s" \
    >"$work/out" 2>"$work/err" || status=$?
  why="\(is not a regular file\|is a symbolic link (not followed)\)"
  if [ "$status" -eq 1 ] &&
     grep -q "warning: s\.lock\.$uid $why: while it is there, this user's exited processes are not folded" "$work/err" &&
     grep -q "$l/s\.lock\.$uid: $why: while it is there, uid $uid's exited processes are not folded" "$work/err" &&
     [ "$(ls "$l" | wc -l)" -eq 2 ] && grep -q '^AES-128-GCM  simd  *1  *16 ' "$work/out"; then
    pass "a $what under this user's lock name: named, not waited on, exit 1"
  else
    fail "a $what under the lock name (exit $status): $(ls "$l") $(cat "$work/out" "$work/err")"
  fi
done
cd "$here"

# 2. aesmux info with a setting from each origin: calibration file,
# openssl.cnf, environment, and defaults.
cat >"$work/calibration.conf" <<CAL
# written by hand for this test
cbc.fallback_max_len = 80
gcm.afalg_min_len = 16K
CAL
aesmux_cnf "$work/openssl.cnf" "calibration_file = $work/calibration.conf" \
  "kernels = none" "afalg = off" "gcm.fallback_max_len = 2K"
# Masks what differs between machines and checkouts; the tiers built in
# (none on aarch64) and which of them this CPU runs are left out.
mask() {
  sed -E -e "s|$work|@WORK@|g" -e "s|$build|@BUILD@|g" \
    -e 's/^aesmux [0-9.]+,/aesmux @VERSION@,/' \
    -e 's/^(OpenSSL +).*/\1@OPENSSL@/' \
    -e 's/^(architecture|paths|CPU features)( +).*/\1\2@MASKED@/' \
    -e '/^(kernel tiers)? +[a-z0-9_]+: /d' \
    -e 's/"(version|openssl|architecture|paths|cpu_features)": "[^"]*"/"\1": "@MASKED@"/' \
    -e '/^ +\{"name": "[a-z0-9_]+", "state": /d'
}
export OPENSSL_CONF=$work/openssl.cnf
golden info.txt < <(AESMUX_XTS_FALLBACK_MAX_LEN=1K aesmux info | mask)
golden info.json < <(AESMUX_XTS_FALLBACK_MAX_LEN=1K aesmux info --json | mask)
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["settings"]) == 25' \
  "$work/info.json" && pass "info --json is well-formed JSON with 25 settings" ||
  fail "info --json is not JSON, or not every setting"
# (Through a file: grep -q may leave before aesmux has written, which
# pipefail would count against it.)
if OPENSSL_CONF=/dev/null aesmux info >"$work/inactive.txt" &&
   grep -q "NOT active in openssl.cnf" "$work/inactive.txt"; then
  pass "info says when openssl.cnf does not load aesmux"
else
  fail "info does not say that openssl.cnf leaves aesmux out"
fi
# Every mistake: info lists it and exits with status 1; aesmux loads
# unless a value cannot be used.
# problem NAME TEXT [VAR=VALUE...]: info (with the environment given) lists
# TEXT among its problems and exits with status 1.
problem() {
  local name=$1 text=$2 status=0
  shift 2
  env "$@" "${emulator[@]}" "$build/provider/aesmux" info \
    >"$work/problem.txt" 2>"$work/problem-err" || status=$?
  if [ "$status" -eq 1 ] && grep -qF "$text" "$work/problem.txt"; then
    pass "info lists $name and exits with status 1"
  else
    fail "info, $name: status $status: $(cat "$work/problem.txt" "$work/problem-err")"
  fi
}
printf 'cbc.fallback_max_len = many\n' >"$work/calibration.conf"
problem "a malformed calibration file (ignored, the defaults in force)" \
  "calibration.conf:1: cbc.fallback_max_len = 'many': expected a byte count"
grep -q '^  cbc.fallback_max_len   0                default$' "$work/problem.txt" ||
  fail "a malformed calibration file's thresholds are not the defaults"
aesmux_cnf "$work/unknown.cnf" "kernals = aesni"
problem "an unknown key with the nearest one" \
  "  $work/unknown.cnf [aesmux_sect]: unknown key 'kernals' (did you mean 'kernels'?): ignored" \
  OPENSSL_CONF="$work/unknown.cnf"
problem "an unknown variable with the nearest one" \
  "  environment: 'AESMUX_KERNAL' is not a variable aesmux reads (did you mean 'AESMUX_KERNELS'?): ignored" \
  AESMUX_KERNAL=aesni
grep -q '^PROBLEMS       2 in its configuration' "$work/problem.txt" ||
  fail "info does not count both problems: $(cat "$work/problem.txt")"
aesmux_cnf "$work/nostats.cnf" "stats_file = $work/missing/s"
problem "a statistics directory that does not exist" \
  "  stats_file: no statistics are written: cannot open the directory $work/missing: No such file or directory" \
  OPENSSL_CONF="$work/nostats.cnf"
problem "what aesmux ignores while off, and that it is off" \
  "OFF            disable = 1 (environment: AESMUX_DISABLE): aesmux registers no algorithm" \
  AESMUX_DISABLE=1 AESMUX_KERNELS=fast
aesmux_cnf "$work/badvalue.cnf" "cbc.mb_min_len = lots"
if OPENSSL_CONF=$work/badvalue.cnf aesmux info >/dev/null 2>"$work/err"; then
  fail "info succeeded with a value aesmux cannot use"
else
  grep -q "lists aesmux, but it did not load" "$work/err" &&
    grep -q "(aesmux: cbc.mb_min_len = 'lots': expected a byte count" "$work/err" &&
    pass "info names the value that kept aesmux from loading" ||
    fail "a bad value: $(cat "$work/err")"
fi
# A module OpenSSL cannot load: nobody else says anything; info gives the
# loader's message.
aesmux_cnf "$work/nomodule.cnf"
sed -i 's|^module = .*|module = /nonexistent/aesmux.so|' "$work/nomodule.cnf"
if OPENSSL_CONF=$work/nomodule.cnf aesmux info >/dev/null 2>"$work/err"; then
  fail "info succeeded with a module that does not exist"
else
  grep -q "filename(/nonexistent/aesmux.so): /nonexistent/aesmux.so: cannot open shared object file" "$work/err" &&
    pass "info shows the loader's message for a module that does not exist" ||
    fail "a missing module: $(cat "$work/err")"
fi
# With config_diagnostics, aesmux stops info as any program, with the reason.
{ echo "config_diagnostics = 1"; cat "$work/unknown.cnf"; } >"$work/diagnostics.cnf"
status=0
OPENSSL_CONF=$work/diagnostics.cnf aesmux info >/dev/null 2>"$work/err" ||
  status=$?
[ "$status" -eq 1 ] && grep -q "unknown key 'kernals'" "$work/err" &&
  grep -q "^aesmux: stopping the program (exit status 1)" "$work/err" &&
  pass "config_diagnostics stops info with the reason" ||
  fail "config_diagnostics: status $status: $(cat "$work/err")"

# 3. aesmux bench: one short cell; plain lines (no terminal control
# characters) when stderr is not a terminal.
export OPENSSL_CONF=/dev/null
if aesmux bench --algs aes-128-ctr,aes-256-gcm --sizes 1K --runs 1 \
     --seconds 0.05 >"$work/bench" 2>"$work/bench-err"; then
  if [ "$(grep -cE '^aes-(128-ctr|256-gcm) +encrypt +1024 +[0-9]+ +[0-9]+ +[0-9.]+x$' "$work/bench")" -eq 2 ] &&
     ! grep -q $'\r' "$work/bench" "$work/bench-err"; then
    pass "bench prints one line per cell with the ratio"
  else
    fail "bench output: $(cat "$work/bench" "$work/bench-err")"
  fi
else
  fail "bench failed: $(cat "$work/bench-err")"
fi
if aesmux bench --algs aes-128-nope --sizes 16 --runs 1 --seconds 0.01 \
     >/dev/null 2>&1; then
  fail "bench accepted an unknown algorithm"
else
  pass "bench refuses an unknown algorithm"
fi

# 4. aesmux calibrate --quick: a calibration file the provider then loads
# (its thresholds in force, from the calibration, in `aesmux info`), and
# a well-formed SVG with one curve per path in every panel that rsvg-convert
# renders, every path in its own colour, no text over another; the sizes
# include where the defaults sit (cbc.mb_min_len's 512, 8K); the time is
# estimated from a trial and compared with what it took.
start=$SECONDS
if aesmux calibrate --quick --module "$build/provider/aesmux.so" \
     --output "$work/cal.conf" --plot "$work/cal.svg" >"$work/calibrate" \
     2>"$work/calibrate-err"; then
  pass "calibrate --quick took $((SECONDS - start)) s: $(grep '^measured in' "$work/calibrate")"
else
  fail "calibrate --quick failed: $(cat "$work/calibrate-err")"
fi
grep -q '^cbc.fallback_max_len = ' "$work/cal.conf" &&
  pass "the calibration file has the thresholds" ||
  fail "calibration file: $(cat "$work/cal.conf")"
grep -qE '^# Sizes measured: 16 64 256 512 1K 2K 4K 8K 16K 64K$' "$work/cal.conf" &&
  pass "calibrate --quick measures where the defaults sit (512, 2K, 8K, 16K)" ||
  fail "sizes measured: $(grep Sizes "$work/cal.conf")"
grep -qE '^about [0-9]+:[0-9]{2}, from a trial of every path' "$work/calibrate" &&
  grep -qE '^measured in [0-9]+:[0-9]{2} \(estimated [0-9]+:[0-9]{2}\)$' "$work/calibrate" &&
  pass "calibrate estimates its time from a trial and says what it took" ||
  fail "calibrate's estimate: $(head -4 "$work/calibrate")"
grep -q "calibration_file = $work/cal.conf" "$work/calibrate" &&
  pass "calibrate says how to use the file" || fail "no calibration_file hint"
aesmux_cnf "$work/calibrated.cnf" "calibration_file = $work/cal.conf"
if OPENSSL_CONF=$work/calibrated.cnf aesmux info --json >"$work/calibrated.json" &&
   python3 "$here/check_calibration.py" "$work/cal.conf" "$work/cal.svg" \
     "$work/calibrated.json"; then
  pass "the provider loads the calibration (every threshold in force from it); the plot is well-formed SVG with one curve per path in each of 28 panels"
else
  fail "the calibration file or the plot (above)"
fi
if ! command -v rsvg-convert >/dev/null; then
  fail "rsvg-convert is not installed (Debian: librsvg2-bin, in scripts/common.sh's test packages)"
elif python3 "$here/check_plot.py" "$work/cal.svg"; then
  pass "rsvg-convert renders the plot: every path its own colour and dash, log axes, no text over another"
else
  fail "the plot as rendered (above)"
fi
if aesmux calibrate --quick --runs 1 --seconds 0.0005 --cnf \
     --module "$build/provider/aesmux.so" --output "$work/snippet.cnf" \
     --plot "$work/snippet.svg" >/dev/null 2>&1 &&
   grep -q "^# Lines for aesmux's section of openssl.cnf" "$work/snippet.cnf" &&
   grep -q '^gcm.fallback_max_len = ' "$work/snippet.cnf"; then
  pass "calibrate --cnf writes lines for openssl.cnf"
else
  fail "calibrate --cnf: $(cat "$work/snippet.cnf" 2>&1)"
fi
if aesmux calibrate --quick --runs 1 --seconds 0.0005 --families cbc,gcm \
     --module "$build/provider/aesmux.so" --output "$work/families.conf" \
     --plot "$work/families.svg" >/dev/null 2>&1 &&
   grep -q '^# aesmux calibration, written by `aesmux calibrate --quick --families cbc,gcm`' "$work/families.conf" &&
   grep -q '^cbc.fallback_max_len = ' "$work/families.conf" &&
   grep -q '^gcm.fallback_max_len = ' "$work/families.conf" &&
   ! grep -qE '^(ecb|ctr|xts)\.' "$work/families.conf" &&
   ! grep -qE '^#   AES-[0-9]+-(ECB|CTR|XTS) ' "$work/families.conf"; then
  pass "calibrate --families measures and writes those families alone"
else
  fail "calibrate --families: $(cat "$work/families.conf" 2>&1)"
fi

# 5. Usage: --help and --version; an unknown command or option, or a value
# that is not a number in range, is refused with exit status 2 before
# anything runs, naming the mistake and the nearest valid name.
aesmux --help >"$work/help" && grep -q '^  calibrate \[--quick\]' "$work/help" &&
  pass "--help" || fail "--help failed"
aesmux calibrate --help >"$work/help" &&
  grep -q '^usage: aesmux calibrate \[--quick\]' "$work/help" &&
  pass "calibrate --help" || fail "calibrate --help: $(cat "$work/help")"
for version in --version version; do
  if aesmux $version >"$work/version" &&
     grep -qE '^aesmux [0-9]+\.[0-9]+\.[0-9]+ \(OpenSSL [0-9.]+' "$work/version"; then
    pass "aesmux $version: $(cat "$work/version")"
  else
    fail "aesmux $version: $(cat "$work/version")"
  fi
done
# usage_error EXPECTED ARGS...: exit status 2 within 20 s (inf and nan
# must not start a measurement that never ends) and EXPECTED on stderr.
usage_error() {
  local expected=$1 status=0
  shift
  timeout 20 "${emulator[@]}" "$build/provider/aesmux" "$@" \
    >"$work/usage-out" 2>"$work/usage-err" || status=$?
  if [ "$status" -eq 2 ] && grep -qF -- "$expected" "$work/usage-err" &&
     [ ! -s "$work/usage-out" ]; then
    pass "aesmux $*: exit 2, $(head -1 "$work/usage-err")"
  else
    fail "aesmux $*: exit $status, $(cat "$work/usage-err" "$work/usage-out")"
  fi
}
usage_error "usage: aesmux COMMAND"
usage_error "unknown command 'frobnicate'" frobnicate
usage_error "unknown command 'inf' (did you mean 'info'?)" inf
usage_error "unknown option '--verison' (did you mean '--version'?)" --verison
usage_error "unknown option '--jsn' (did you mean '--json'?)" info --jsn
usage_error "unexpected argument 'extra'" info extra
usage_error "unknown option '--per-proces' (did you mean '--per-process'?)" \
  stats --per-proces
usage_error "unknown option '--qiuck' (did you mean '--quick'?)" calibrate --qiuck
usage_error "--margin: 'abc' is not a number" calibrate --margin abc
usage_error "--margin: 'nan' is not a finite number" calibrate --margin nan
usage_error "--margin: 101 is out of range (0 to 100)" calibrate --margin 101
usage_error "--runs: '3x' is not a whole number" calibrate --runs 3x
usage_error "--runs: 0 is out of range" calibrate --runs 0
usage_error "--streams: 1 is out of range (2 to 256)" calibrate --streams 1
usage_error "--seconds: 'inf' is not a finite number" calibrate --seconds inf
usage_error "--seconds: 'nan' is not a finite number" calibrate --seconds nan
usage_error "--output needs a value (FILE)" calibrate --output
usage_error "must name different files" calibrate --output a.svg --plot a.svg
usage_error "--families: unknown family 'cbx' (did you mean 'cbc'?)" \
  calibrate --families gcm,cbx
usage_error "--families names no family" calibrate --families ,
usage_error "--runs: 'x' is not a whole number" bench --runs x
usage_error "--seconds: 'inf' is not a finite number" bench --seconds inf
usage_error "--seconds: -1 is out of range (0.0001 to 3600)" bench --seconds=-1
usage_error "--sizes: '1Q' is not a byte count" bench --sizes 16,1Q
usage_error "--algs: no cipher 'aes-128-gmc' (did you mean 'aes-128-gcm'?)" \
  bench --algs aes-128-gmc
usage_error "unexpected argument 'x'" version x

# 6. Calibrate's files: a symbolic link planted at a name it writes (given,
# or the default in the working directory), or a FIFO, is refused before
# anything is measured, and what it points to is left alone.
echo precious >"$work/victim"
mkdir "$work/cwd"
ln -s "$work/victim" "$work/cwd/aesmux-calibration.conf"
ln -s "$work/victim" "$work/link.svg"
ln -s "$work/victim" "$work/plot.png"
mkfifo "$work/fifo.conf"
for args in "" "--output $work/c.conf --plot $work/link.svg" \
            "--output $work/c.conf --plot $work/plot.svg" \
            "--output $work/fifo.conf --plot $work/p.svg"; do
  status=0
  (cd "$work/cwd" && timeout 20 "${emulator[@]}" "$build/provider/aesmux" \
     calibrate --quick --module "$build/provider/aesmux.so" $args \
     >"$work/refused" 2>&1) || status=$?
  if [ "$status" -eq 1 ] && grep -qE "(is a symbolic link|is a FIFO): not replaced" "$work/refused" &&
     ! grep -q "^about" "$work/refused"; then
    pass "calibrate ${args:-(default names)}: $(cat "$work/refused")"
  else
    fail "calibrate ${args:-(default names)}: exit $status, $(cat "$work/refused")"
  fi
done
[ "$(cat "$work/victim")" = precious ] && [ -L "$work/link.svg" ] &&
  [ -p "$work/fifo.conf" ] &&
  pass "the link's target and the FIFO are untouched" ||
  fail "a planted link's target or the FIFO changed"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
