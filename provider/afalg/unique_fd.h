// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// UniqueFd: owns one file descriptor (move-only) and closes it when dropped,
// unless it was made in another process (see process.h): a forked child
// never issues a syscall on what its parent opened. A descriptor taken from
// the afalg path's budget (fd_budget.h) goes back to it when closed.
#ifndef AESMUX_PROVIDER_AFALG_UNIQUE_FD_H_
#define AESMUX_PROVIDER_AFALG_UNIQUE_FD_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/unique_fd.h belongs to a layer above the one that includes it"
#endif

#include <unistd.h>

#include <cstdint>
#include <utility>

#include "provider/afalg/fd_budget.h"
#include "provider/afalg/process.h"

namespace aesmux::afalg {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd), generation_(ProcessGeneration()) {}
  // `fd` was opened under a reservation of ReserveFds(1).
  static UniqueFd Budgeted(int fd) {
    UniqueFd owned(fd);
    owned.budgeted_ = true;
    return owned;
  }
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd &&other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        generation_(other.generation_),
        budgeted_(other.budgeted_) {}
  UniqueFd &operator=(UniqueFd &&other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
      generation_ = other.generation_;
      budgeted_ = other.budgeted_;
    }
    return *this;
  }
  UniqueFd(const UniqueFd &) = delete;
  UniqueFd &operator=(const UniqueFd &) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Whether this process opened it (not a parent before fork).
  bool ours() const { return generation_ == ProcessGeneration(); }

  // Gives up ownership without closing.
  int release() { return std::exchange(fd_, -1); }

  void reset() {
    if (fd_ >= 0 && ours()) {
      close(fd_);
      if (budgeted_) ReturnFds(1);
    }
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  uint64_t generation_ = 0;
  bool budgeted_ = false;
};

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_UNIQUE_FD_H_
