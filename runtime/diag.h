// Diagnostics on stderr, written with write(2). Runtime-safe: no malloc, async-signal-safe.
#pragma once

#include <atomic>

namespace memtrack::rt {

// Diagnostics: writes "memtrack[pid]: <message>\n" to stderr with write(2).
void diag(const char* message);
// diag, the first time only (for a flag that starts false).
void warn_once(std::atomic<bool>& flag, const char* message);

}  // namespace memtrack::rt
