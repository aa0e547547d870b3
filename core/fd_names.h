// Names for what the resources section of a result file stores (core/result_format.h):
// descriptor kinds, the functions that open descriptors, open(2) flags and fopen modes.
// Shared by the runtime's own text report and the CLI's renderers, so both spell them alike.
// Freestanding: no libc, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/result_format.h"
#include "core/text_buffer.h"

namespace memtrack::core {

// open(2) flags with their Linux x86-64 values: the values the resources section stores,
// whatever the reading machine's <fcntl.h> says (fd_names_test.cpp checks they agree here).
namespace open_flags {
inline constexpr uint32_t kAccessMode = 03;
inline constexpr uint32_t kReadOnly = 00;
inline constexpr uint32_t kWriteOnly = 01;
inline constexpr uint32_t kReadWrite = 02;
inline constexpr uint32_t kCreate = 0100;
inline constexpr uint32_t kExclusive = 0200;
inline constexpr uint32_t kNoCtty = 0400;
inline constexpr uint32_t kTruncate = 01000;
inline constexpr uint32_t kAppend = 02000;
inline constexpr uint32_t kNonBlock = 04000;
inline constexpr uint32_t kDsync = 010000;
inline constexpr uint32_t kAsync = 020000;
inline constexpr uint32_t kDirect = 040000;
inline constexpr uint32_t kLargeFile = 0100000;  // implied on 64-bit; F_GETFL reports it
inline constexpr uint32_t kDirectory = 0200000;
inline constexpr uint32_t kNoFollow = 0400000;
inline constexpr uint32_t kNoAtime = 01000000;
inline constexpr uint32_t kCloseOnExec = 02000000;
inline constexpr uint32_t kSync = 04010000;  // __O_SYNC | O_DSYNC
inline constexpr uint32_t kPath = 010000000;
inline constexpr uint32_t kTmpFile = 020200000;  // __O_TMPFILE | O_DIRECTORY

// The running machine's open(2) flags in the values above. ARM (32- and 64-bit) numbers four
// flags differently from x86-64; every other bit is the same on all three.
inline uint32_t from_native(uint32_t flags) {
#if defined(__arm__) || defined(__aarch64__)
  constexpr uint32_t kArmDirectory = 040000;
  constexpr uint32_t kArmNoFollow = 0100000;
  constexpr uint32_t kArmDirect = 0200000;
  constexpr uint32_t kArmLargeFile = 0400000;
  constexpr uint32_t kMoved = kArmDirectory | kArmNoFollow | kArmDirect | kArmLargeFile;
  uint32_t stored = flags & ~kMoved;
  if (flags & kArmDirectory) stored |= kDirectory;
  if (flags & kArmNoFollow) stored |= kNoFollow;
  if (flags & kArmDirect) stored |= kDirect;
  if (flags & kArmLargeFile) stored |= kLargeFile;
  return stored;
#else
  return flags;
#endif
}
}  // namespace open_flags

// "file", "directory", "socket", "pipe", "eventfd", "timerfd", "signalfd", "epoll",
// "inotify", "memfd"; "other" for kOther and for values outside the enum.
const char* resource_kind_name(result::ResourceKind kind);

// The function as a program calls it: "open", "openat", "creat", "dup", "dup2", "dup3",
// "fcntl", "pipe", "pipe2", "socket", "socketpair", "accept", "accept4", "eventfd",
// "timerfd_create", "signalfd", "epoll_create", "epoll_create1", "inotify_init",
// "inotify_init1", "memfd_create", "fopen", "fdopen", "freopen"; nullptr for a value that
// is none of them.
const char* resource_call_name(result::ResourceCall call);

// Appends flags as open(2)'s names, "O_WRONLY|O_CREAT|O_TRUNC": the access mode first (always
// present, O_RDONLY being 0), then the other flags in bit order, O_SYNC and O_TMPFILE as
// themselves rather than their parts. Bits without a name end it as one octal number,
// "|040000000".
void format_open_flags(uint32_t flags, TextBuffer& out);

// The open(2) flags glibc's fopen opens a file with for `mode`: "r" O_RDONLY, "w"
// O_WRONLY|O_CREAT|O_TRUNC, "a" O_WRONLY|O_CREAT|O_APPEND, '+' makes it O_RDWR, 'x' adds
// O_EXCL and 'e' O_CLOEXEC (before a ',' only). An invalid or null mode gives O_RDONLY.
uint32_t open_flags_of_mode(const char* mode);

// Copies what says how a stream is opened, "w+b" or "re", into `out` (NUL-terminated): the
// mode up to glibc's ",ccs=" part, printable characters other than '"' and '\' only, at
// most out_size - 1 of them. Returns the length copied.
size_t copy_stream_mode(const char* mode, char* out, size_t out_size);

}  // namespace memtrack::core
