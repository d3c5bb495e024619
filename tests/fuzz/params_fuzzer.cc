// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// libFuzzer target: arbitrary OSSL_PARAM arrays set and got on contexts of
// every cipher, on aesmux and the default provider (differential.h).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/differential.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  aesmux::fuzz::RunParams(data, size);
  return 0;
}
