// Diagnostics on stderr, written with write(2). Runtime-safe: no malloc, async-signal-safe.
#pragma once

#include <atomic>

namespace memtrack::rt {

// Diagnostics: writes "memtrack[pid]: <message>\n" to stderr (or set_diag_fd's file) with
// write(2).
void diag(const char* message);
// Where diag writes from now on (an attached runtime's log file, so the program's stderr stays
// its own); -1 goes back to stderr.
void set_diag_fd(int fd);

// diag, the first time only (for a flag that starts false).
void warn_once(std::atomic<bool>& flag, const char* message);

}  // namespace memtrack::rt
