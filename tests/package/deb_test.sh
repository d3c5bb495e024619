#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# The Debian package made by CPack from this build.
#
#   deb_test.sh BUILD_DIR layout   builds BUILD_DIR/package/aesmux_*.deb and
#                                  checks its control fields, that every
#                                  file lands where it belongs (dpkg -x), and
#                                  that the unpacked command loads the
#                                  unpacked provider;
#   deb_test.sh BUILD_DIR install  installs it (dpkg -i), checks that
#                                  `openssl list -providers` shows aesmux
#                                  and `aesmux info` works, purges it and
#                                  checks that no file of it is left. Root
#                                  only: skips (77) otherwise, and when an
#                                  aesmux not from the package is installed.
set -euo pipefail
build=$(cd "$1" && pwd)
mode=$2
SKIP=77
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
for tool in cpack dpkg-deb dpkg-shlibdeps dpkg-parsechangelog readelf; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed (Debian: cmake, dpkg, dpkg-dev)"
    exit "$SKIP"
  fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
modulesdir=$(pkg-config --variable=modulesdir libcrypto)

if [ "$mode" = layout ]; then
  rm -rf "$build/package"
  (cd "$build" && cpack -G DEB -B "$build/package" >"$work/cpack.log" 2>&1) ||
    { cat "$work/cpack.log"; fail "cpack failed"; finish; }
  deb=$(ls "$build"/package/aesmux_*.deb)
  pass "cpack made $(basename "$deb")"

  [ "$(dpkg-deb -f "$deb" Package)" = aesmux ] && pass "Package: aesmux" ||
    fail "Package: $(dpkg-deb -f "$deb" Package)"
  [ "$(dpkg-deb -f "$deb" Architecture)" = "$(dpkg --print-architecture)" ] &&
    pass "Architecture: $(dpkg --print-architecture)" ||
    fail "Architecture: $(dpkg-deb -f "$deb" Architecture)"
  depends=$(dpkg-deb -f "$deb" Depends)
  for dependency in libssl3 libc6; do
    [[ ", $depends" == *", $dependency "* || ", $depends," == *", $dependency,"* ]] &&
      pass "Depends names $dependency" || fail "Depends lacks $dependency: $depends"
  done
  # The module links liburing's archive (provider/CMakeLists.txt).
  [[ "$depends" != *liburing* ]] && pass "Depends needs no liburing" ||
    fail "Depends names liburing: $depends"

  # Every file where it belongs, nothing else (no headers, no tests).
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' |
    sort >"$work/files"
  for expected in /usr/bin/aesmux "$modulesdir/aesmux.so" \
                  /usr/share/man/man1/aesmux.1.gz /usr/share/man/man7/aesmux.7.gz \
                  /usr/share/doc/aesmux/openssl.cnf.example \
                  /usr/share/doc/aesmux/README.md \
                  /usr/lib/tmpfiles.d/aesmux.conf \
                  /usr/share/doc/aesmux/docs/settings.md; do
    grep -qx "$expected" "$work/files" && pass "ships $expected" ||
      fail "does not ship $expected"
  done
  engines=$(pkg-config --variable=enginesdir libcrypto)
  unexpected=$(grep -v -e '^/usr/bin/aesmux$' -e "^$modulesdir/aesmux.so$" \
    -e "^$engines/[a-z_]*aesmux[a-z_]*\.so$" -e '^/usr/share/man/man[17]/aesmux\.[17]\.gz$' \
    -e '^/usr/share/doc/aesmux/' -e '^/usr/lib/tmpfiles\.d/aesmux\.conf$' \
    "$work/files" || true)
  [ -z "$unexpected" ] && pass "no other files" ||
    fail "files outside the layout: $unexpected"

  # Debian policy: a machine-readable copyright file, a changelog whose
  # first entry is this version, the hardening flags; lintian finds nothing
  # at any level (errors, warnings, info, pedantic, experimental).
  for doc in copyright changelog.gz; do
    grep -qx "/usr/share/doc/aesmux/$doc" "$work/files" && pass "ships /usr/share/doc/aesmux/$doc" ||
      fail "does not ship /usr/share/doc/aesmux/$doc"
  done
  dpkg-deb -e "$deb" "$work/control"
  [ -x "$work/control/postinst" ] &&
    grep -q 'systemd-tmpfiles --create aesmux.conf' "$work/control/postinst" &&
    pass "postinst makes the statistics directory at once" ||
    fail "no postinst running systemd-tmpfiles"

  dpkg -x "$deb" "$work/root"
  version=$(dpkg-deb -f "$deb" Version)
  zcat "$work/root/usr/share/doc/aesmux/changelog.gz" >"$work/changelog"
  changelog_version=$(dpkg-parsechangelog -l "$work/changelog" -S Version 2>/dev/null || true)
  [ "$changelog_version" = "$version" ] && pass "the changelog's first entry is $version" ||
    fail "the changelog's first entry is '$changelog_version', the package $version"
  for binary in usr/bin/aesmux "${modulesdir#/}/aesmux.so"; do
    dynamic=$(readelf -d "$work/root/$binary")
    segments=$(readelf -lW "$work/root/$binary")
    symbols=$(readelf -sW --dyn-syms "$work/root/$binary")
    [[ "$dynamic" == *BIND_NOW* || "$dynamic" == *"Flags: NOW"* ]] &&
      [[ "$segments" == *GNU_RELRO* ]] && pass "$binary: full RELRO (-z relro -z now)" ||
      fail "$binary: not linked with -z relro -z now"
    fortified=$(grep -oE '__[a-z0-9_]+_chk\b' <<<"$symbols" | grep -v __stack_chk || true)
    [[ "$symbols" == *__stack_chk_fail* ]] && [ -n "$fortified" ] &&
      pass "$binary: stack protector and fortified calls" ||
      fail "$binary: no __stack_chk_fail or no fortified (__*_chk) call"
  done
  if command -v lintian >/dev/null; then
    if lintian --pedantic -I -E --fail-on error,warning,info,pedantic,experimental \
         "$deb" >"$work/lintian.log" 2>&1; then
      pass "lintian: nothing to report"
    else
      fail "lintian: $(grep -v 'root privileges' "$work/lintian.log")"
    fi
  else
    fail "lintian is not installed (scripts/test.sh installs it)"
  fi
  [ -x "$work/root/usr/bin/aesmux" ] && pass "dpkg -x: the command is executable" ||
    fail "dpkg -x: no executable usr/bin/aesmux"
  # aesmux(1) and aesmux(7), with the settings printed into the latter;
  # man finds nothing to warn about in either.
  for page in man1/aesmux.1.gz:COMMANDS man7/aesmux.7.gz:SETTINGS; do
    file=$work/root/usr/share/man/${page%%:*}
    zcat "$file" | grep -q "^\.SH ${page#*:}" &&
      zcat "$file" | grep -q '^\.TP' &&
      pass "${page%%:*} is a man page" || fail "${page%%:*} is not readable"
    if command -v man >/dev/null; then
      warnings=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$file" 2>&1 >/dev/null || true)
      [ -z "$warnings" ] && pass "man --warnings: nothing in ${page%%:*}" ||
        fail "man --warnings ${page%%:*}: $warnings"
    fi
  done
  zcat "$work/root/usr/share/man/man7/aesmux.7.gz" | grep -q 'AESMUX_CBC_MB_MAX_LEN' &&
    pass "aesmux(7) lists the settings" || fail "aesmux(7) lacks the settings"
  if OPENSSL_CONF=/dev/null OPENSSL_MODULES=$work/root$modulesdir \
       "$work/root/usr/bin/aesmux" info >"$work/info" 2>&1 &&
     grep -q "^tier in use" "$work/info"; then
    pass "the unpacked command loads the unpacked provider"
  else
    fail "unpacked aesmux info: $(cat "$work/info")"
  fi
  finish
fi

[ "$mode" = install ] || { echo "usage: $0 BUILD_DIR layout|install"; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: installing a package needs root (CI runs as root)"
  exit "$SKIP"
fi
deb=$(ls "$build"/package/aesmux_*.deb 2>/dev/null || true)
[ -n "$deb" ] || { fail "no package: the layout test makes it"; finish; }
if dpkg-query -W -f='${Status}' aesmux 2>/dev/null | grep -q "ok installed"; then
  echo "SKIP: a package aesmux is installed already; not touching it"
  exit "$SKIP"
fi
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' >"$work/files"
while read -r file; do
  if [ -e "$file" ]; then
    echo "SKIP: $file exists and is not from the package (cmake --install?); not overwriting it"
    exit "$SKIP"
  fi
done <"$work/files"

stats_dir_before=0
[ -e /var/tmp/aesmux ] && stats_dir_before=1
if dpkg -i "$deb" >"$work/dpkg.log" 2>&1; then
  pass "dpkg -i $(basename "$deb")"
else
  cat "$work/dpkg.log"
  dpkg --purge aesmux >/dev/null 2>&1 || true
  fail "dpkg -i failed"
  finish
fi
if OPENSSL_CONF=/dev/null openssl list -providers -provider aesmux \
     -provider default 2>&1 | tee "$work/providers" | grep -q "aesmux AES provider"; then
  pass "openssl list -providers shows aesmux from the package"
else
  fail "openssl list -providers: $(cat "$work/providers")"
fi
OPENSSL_CONF=/dev/null env -u OPENSSL_MODULES /usr/bin/aesmux info >"$work/info" 2>&1 &&
  pass "/usr/bin/aesmux info" || fail "/usr/bin/aesmux info: $(cat "$work/info")"
if command -v man >/dev/null; then
  man -w aesmux >/dev/null 2>&1 && pass "man aesmux finds the page" ||
    fail "man aesmux does not find the page"
  man -w 7 aesmux >/dev/null 2>&1 && pass "man 7 aesmux finds the page" ||
    fail "man 7 aesmux does not find the page"
fi

# The statistics directory docs/operating.md suggests, made by the package (through
# systemd-tmpfiles, where it is installed).
if command -v systemd-tmpfiles >/dev/null; then
  [ "$(stat -c %a:%U /var/tmp/aesmux 2>/dev/null)" = 1777:root ] &&
    pass "/var/tmp/aesmux made, sticky and world-writable" ||
    fail "/var/tmp/aesmux: $(stat -c %a:%U /var/tmp/aesmux 2>&1)"
  [ "$stats_dir_before" -eq 1 ] || rmdir /var/tmp/aesmux 2>/dev/null || true
fi

dpkg --purge aesmux >"$work/dpkg.log" 2>&1 && pass "dpkg --purge aesmux" ||
  fail "dpkg --purge: $(cat "$work/dpkg.log")"
left=""
while read -r file; do
  [ -e "$file" ] && left+=" $file"
done <"$work/files"
[ -d /usr/share/doc/aesmux ] && left+=" /usr/share/doc/aesmux/"
[ -z "$left" ] && pass "removal leaves no file behind" || fail "left behind:$left"
finish
