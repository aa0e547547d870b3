// The path a descriptor was opened with, as the program passed it to open, openat, creat,
// fopen or freopen (relative paths stay relative), so reports show what the program named
// rather than /proc/self/fd's link, which resolves symlinks. Runtime-safe: no malloc; the
// table is reserved address space, touched only for the descriptors used.
#pragma once

#include "core/text_buffer.h"

namespace memtrack::rt {

// Paths up to this length are remembered; longer ones (and descriptors from kMaxFd on) fall
// back to the /proc link.
inline constexpr int kMaxRememberedPath = 255;
inline constexpr int kMaxRememberedFd = 1 << 16;

// Remembers `path` for `fd` (or forgets what `fd` had, when path is null or too long). Called
// by the hooks after a successful open. Thread safe in the sense the fd table is: a slot is
// written only by the call that just created that descriptor.
void remember_fd_path(int fd, const char* path);

// Appends the remembered path of `fd` to `text`; false (nothing appended) if there is none.
// Meaningful only while fd's fd-table entry comes from a call that remembers paths.
bool try_append_fd_path(int fd, core::TextBuffer& text);

}  // namespace memtrack::rt
