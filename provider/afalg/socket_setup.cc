// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/afalg/socket_setup.h"

#include <linux/if_alg.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace aesmux::afalg {

using core::Family;

namespace {

constexpr size_t kTagLen = 16;

}  // namespace

int BindAlgorithm(int fd, std::string_view type, std::string_view name) {
  sockaddr_alg address{};
  if (type.size() >= sizeof(address.salg_type) ||
      name.size() >= sizeof(address.salg_name)) {
    return -ENAMETOOLONG;
  }
  address.salg_family = AF_ALG;
  std::memcpy(address.salg_type, type.data(), type.size());
  std::memcpy(address.salg_name, name.data(), name.size());
  if (bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0) {
    return -errno;
  }
  return 0;
}

int SetSocketKey(int fd, Family family, std::span<const uint8_t> key) {
  if (setsockopt(fd, SOL_ALG, ALG_SET_KEY, key.data(),
                 static_cast<socklen_t>(key.size())) != 0) {
    return -errno;
  }
  if (family == Family::kGcm &&
      setsockopt(fd, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, nullptr, kTagLen) != 0) {
    return -errno;
  }
  return 0;
}

}  // namespace aesmux::afalg
