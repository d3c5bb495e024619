// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// libFuzzer target: stateful EVP sequences on aesmux and the default
// provider (differential.h).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/differential.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  aesmux::fuzz::RunSequence(data, size);
  return 0;
}
