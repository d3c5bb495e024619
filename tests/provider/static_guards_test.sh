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
# Nor any thread_local with a destructor: glibc registers one when a
# thread first touches it (__cxa_thread_atexit_impl), and aborts the
# process if that registration runs out of memory. aesmux's per-thread
# objects are released through core/thread_exit.h instead, so a module
# imports neither registration function.
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
  imports=$(nm -D --undefined-only "$module")
  if grep -Eq ' __cxa_thread_atexit(_impl)?(@|$)' <<<"$imports"; then
    echo "$module registers thread_local destructors (a thread's first" \
         "use aborts when memory has run out): use core/thread_exit.h" >&2
    status=1
  else
    echo "$module: no thread_local destructors"
  fi
done
exit $status
