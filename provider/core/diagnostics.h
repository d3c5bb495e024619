// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The one writer of everything aesmux prints on stderr (why it did not
// load, AESMUX_TRACE's lines, a statistics file it cannot write).
//
// aesmux runs inside other people's programs, where descriptor 2 is not
// always a stream anyone reads: a program that closed stderr may have
// opened a data file or a socket that took its number, and a pipe whose
// reader went away, or stopped reading, blocks a writer. So a line is
// written only into the file descriptor 2 was when aesmux was loaded
// (PinStderr: its device and inode; nothing if it was closed then), only
// if that is a regular file, a pipe, a socket or a character device, and
// only if the write cannot block: a socket through
// send(MSG_DONTWAIT | MSG_NOSIGNAL), a pipe or character device when
// poll() says it has room now (for a line of at most PIPE_BUF bytes, which
// such a pipe takes whole; another writer filling the pipe between the two
// calls would block this one only as long as it blocks that writer), a
// regular file as it is. Anything else drops the line, and says so by its
// result. No allocation, no lock: it runs on request paths.
//
// "When aesmux was loaded" is when this load of the module made its first
// instance. Later instances keep that file: another library context's, an
// ENGINE initialised again, and a forked child's (its stderr is its
// parent's, and it may close it and open a file on its number just as
// well). A module unloaded and loaded again is a new load, and pins again
// (in practice aesmux.so stays loaded once it has served a request:
// core/thread_exit.h).
#ifndef AESMUX_PROVIDER_CORE_DIAGNOSTICS_H_
#define AESMUX_PROVIDER_CORE_DIAGNOSTICS_H_

#include <cstddef>
#include <string_view>

namespace aesmux::core {

// On its first call in this load of the module, records what descriptor 2
// is now (or that it is closed): the file lines may go to; later calls
// change nothing. Called when an aesmux instance (provider or ENGINE) is
// made, before anything it prints.
void PinStderr();

// Writes `text` (one or more whole lines; beyond kMaxDiagnosticBytes, which
// a pipe takes in one piece, it is cut) to stderr in one call, under the
// rules above. Returns whether it was written, in full or in part.
inline constexpr size_t kMaxDiagnosticBytes = 4096;
bool PrintDiagnostic(std::string_view text);

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_DIAGNOSTICS_H_
