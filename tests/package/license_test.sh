#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Every source file of the repository names its licence (an SPDX line in its
# first lines), and the licence text is there. Data files (test vectors,
# golden outputs, fuzz seeds) carry their source's licence in
# tests/vectors/README.md and in the package's copyright file instead.
# Usage: license_test.sh SOURCE_DIR
set -euo pipefail
src=$1
cd "$src"
grep -q 'Apache License' LICENSE &&
  grep -q 'Version 2.0, January 2004' LICENSE ||
  { echo "LICENSE is not the Apache License 2.0" >&2; exit 1; }

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files)
else
  mapfile -t files < <(find . -path ./.git -prune -o -path './build*' -prune \
                       -o -type f -print | sed 's|^\./||')
fi
missing=0 checked=0
for f in "${files[@]}"; do
  case "$f" in
    *.cc|*.h|*.asm|*.inc|*.sh|*.py|*.cmake|*CMakeLists.txt|*.map|*.in|\
    openssl.cnf.example|.ci/run) ;;
    *) continue ;;
  esac
  [ -f "$f" ] || continue
  checked=$((checked + 1))
  # Each on a line of its own, as SPDX tools read them.
  if ! head -n 4 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0$' ||
     ! head -n 5 "$f" | grep -Eq '^(#|//|;;|\.\\") Copyright [0-9]{4} The aesmux Authors$'; then
    echo "no SPDX-License-Identifier line and Copyright line of their own in the first lines of $f" >&2
    missing=$((missing + 1))
  fi
done
echo "$checked source files checked, $missing without their SPDX and Copyright lines"
[ "$checked" -gt 100 ] && [ "$missing" -eq 0 ]
