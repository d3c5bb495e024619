// Which process this is, without a syscall.
//
// Sockets and rings belong to the process that made them. A fork handler
// bumps a per-process generation in the child (no syscall: the child may
// be about to enter a sandbox), so "made in this process" is a comparison
// of two integers, and everything made before the fork is recognised as
// the parent's: the child neither uses nor closes it.
//
// Whether the child may build its own AF_ALG sockets and io_uring rings is
// a policy (afalg_fork): by default it may not, because a forked child may
// have entered a seccomp sandbox since (OpenSSH's pre-authentication child
// does), and a sandbox may kill a process for one socket() call.
#ifndef AESMUX_PROVIDER_AFALG_PROCESS_H_
#define AESMUX_PROVIDER_AFALG_PROCESS_H_

#include <cstdint>

namespace aesmux::afalg {

// Starts at 1 and grows by one in each forked child.
uint64_t ProcessGeneration();

// Arming: the process that probed AF_ALG and io_uring successfully at
// provider init is armed; a forked child is armed only when the parent was
// and the child may rebuild (SetForkRebuild). The afalg path runs only in an
// armed process.
bool Armed();
void Arm();
void SetForkRebuild(bool rebuild);

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_PROCESS_H_
