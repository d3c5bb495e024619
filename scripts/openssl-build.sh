#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Builds OpenSSL from Debian's source packages, once per machine, into
# $AESMUX_TEST_OPENSSL_CACHE (default ~/.cache/aesmux; common.sh says which
# package version each series is): libcrypto, libssl, the openssl command and
# the test programs scripts/test-openssl.sh runs. Prints each build's
# directory; a series already built is only looked up.
#
# usage: scripts/openssl-build.sh [SERIES...]   (default: 3.5 3.6)
set -euo pipefail
source "$(dirname "$0")/common.sh"

install_deps dpkg-dev perl
for series in "${@:-${AESMUX_OPENSSL_SERIES[@]}}"; do
  if [ -z "${AESMUX_OPENSSL_PIN[$series]:-}" ]; then
    echo "unknown OpenSSL series $series (known: ${AESMUX_OPENSSL_SERIES[*]})" >&2
    exit 2
  fi
  start=$SECONDS
  dir=$(openssl_build "$series")
  printf '%s\t%s\t%d s\n' "$series" "$dir" $((SECONDS - start))
done
