// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Whether this process may use the afalg path.
//
// Sockets and rings belong to the process that made them (the fork
// generation, core/process.h): everything made before a fork is
// recognised in the child as the parent's, which the child neither uses
// nor closes.
//
// Whether the child may build its own AF_ALG sockets and io_uring rings is
// a policy (afalg_fork): by default it may not, because a forked child may
// have entered a seccomp sandbox since (OpenSSH's pre-authentication child
// does), and a sandbox may kill a process for one socket() call.
#ifndef AESMUX_PROVIDER_AFALG_PROCESS_H_
#define AESMUX_PROVIDER_AFALG_PROCESS_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/process.h belongs to a layer above the one that includes it"
#endif

#include <cstdint>

#include "provider/core/process.h"

namespace aesmux::afalg {

using core::ProcessGeneration;

// Arming: the process that probed AF_ALG and io_uring successfully at
// provider init is armed; its forked descendants are armed only for a
// provider whose children may rebuild (`fork_rebuild`, its afalg_fork
// setting: each provider instance keeps its own policy, so one loaded with
// afalg_fork = rebuild does not open sockets in the children of another).
// The afalg path runs only in an armed process.
bool Armed(bool fork_rebuild);
void Arm();

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_PROCESS_H_
