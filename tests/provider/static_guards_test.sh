#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# No process-wide function-local static with a dynamic initializer in
# aesmux's modules: its guard, left "in progress" by a thread that was
# initializing it when another thread called fork(), makes the child wait
# forever at its first use (core/process.h: ProcessValue is the fork-safe
# form). Thread-local guards are safe (each thread has its own) and C++
# runtime guards outside aesmux's namespace are not aesmux's to change.
#
# usage: static_guards_test.sh MODULE...
set -euo pipefail
status=0
for module in "$@"; do
  [ -f "$module" ] || { echo "no module $module" >&2; exit 1; }
  # readelf -s: Num Value Size Type Bind Vis Ndx Name...
  guards=$(readelf -W -s -C "$module" |
           awk '$4 != "TLS" && /guard variable for aesmux::/ {
                  $1 = $2 = $3 = $4 = $5 = $6 = $7 = ""; sub(/^ +/, ""); print }' |
           sort -u)
  if [ -n "$guards" ]; then
    echo "$module has process-wide static guards a fork can leave held:" >&2
    echo "$guards" | sed 's/^/  /' >&2
    status=1
  else
    echo "$module: no process-wide static guards"
  fi
done
exit $status
