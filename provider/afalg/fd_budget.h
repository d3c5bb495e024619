// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The afalg path's file descriptors come out of the application's
// RLIMIT_NOFILE: a key holds a tfm socket and pooled op sockets, a thread's
// ring an io_uring descriptor and an eventfd. So that the application
// keeps its own, the path stays within a budget, process-wide:
// - it holds at most a quarter of the soft RLIMIT_NOFILE, or afalg_max_fds
//   when that is lower;
// - it keeps no descriptor numbered in the top quarter of the limit: the
//   kernel hands out the lowest free number, so one up there means the
//   process is close to its limit;
// - when a descriptor would break either rule, idle op sockets of every key
//   are closed to make room (CloseIdleOpSockets), and failing that the
//   request goes to the CPU (an fd_budget hand-off: Handoff::kFdBudget).
// The limit is read (getrlimit) when the provider loads, and again before
// each descriptor is opened (per key, per op socket and per thread's ring,
// never per request), so a limit the application lowers later counts.
// While the budget is spent, refusals cost no syscall.
//
// Errors: -EMFILE stands for "over budget".
#ifndef AESMUX_PROVIDER_AFALG_FD_BUDGET_H_
#define AESMUX_PROVIDER_AFALG_FD_BUDGET_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/fd_budget.h belongs to a layer above the one that includes it"
#endif

#include <cstdint>

namespace aesmux::afalg {

// At provider init: reads RLIMIT_NOFILE; `max_fds` is afalg_max_fds (0:
// no limit of its own).
void ConfigureFdBudget(uint64_t max_fds);

// Takes `count` descriptors from the budget before opening them; false
// when it is spent.
bool ReserveFds(unsigned count);
// Gives back `count` descriptors, closed (or never opened).
void ReturnFds(unsigned count);
// Whether `fd`, just opened under a reservation, may be kept: false when
// it is numbered in the top quarter of the limit.
bool FdLeavesHeadroom(int fd);

// Descriptors held now, and the budget (for tests and diagnostics).
uint64_t FdsHeld();
uint64_t FdBudget();

// Closes every key's idle op sockets, giving their descriptors back
// (afalg.cc: the keys' pools).
void CloseIdleOpSockets();
// Idle op sockets kept in pools now.
uint64_t IdleOpSockets();

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_FD_BUDGET_H_
