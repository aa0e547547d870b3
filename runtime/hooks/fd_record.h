// Recording what the descriptor and stream hooks open and close (fd_hooks.cpp,
// stream_hooks.cpp) in the descriptor table (fd/fd_tracking.h). Runtime-safe: no malloc.
#pragma once

#include <cstdint>

#include "core/result_format.h"
#include "runtime/fd/fd_table.h"

namespace memtrack::rt {

// Records `fd` with the calling thread's stack; `mode` is the fopen mode of a stream, or
// nullptr. fds 0-2 are recorded only for a stream whose FILE object is known (`stream`, and
// `stream_size` bytes of it: a root of the leak scan). Keeps errno.
void note_open(int fd, core::result::ResourceCall call, uint32_t flags, const char* mode,
               const void* stream = nullptr, uint32_t stream_size = 0);

// Erases `fd` before it is closed, copying its entry to *saved if that is not null. True if
// it was tracked.
bool forget_fd(int fd, FdInfo* /*out*/ saved);

// Puts back an entry that forget_fd removed, after the call that was to close it failed.
void restore_fd(int fd, const FdInfo& saved);

}  // namespace memtrack::rt
