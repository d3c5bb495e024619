#!/usr/bin/env bash
# Installs what is missing, builds aesmux and runs every test.
set -euo pipefail
source "$(dirname "$0")/common.sh"

install_deps
build

log "running the test suites"
ctest --test-dir "$AESMUX_BUILD" --output-on-failure --timeout 900 \
  -j "$(nproc)" "$@"
