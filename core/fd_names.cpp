// Names for descriptor kinds, opening functions and open(2) flags. Freestanding: no libc.
#include "core/fd_names.h"

namespace memtrack::core {
namespace {

namespace f = open_flags;

struct FlagName {
  uint32_t value;
  const char* name;
};

// In bit order. O_SYNC and O_TMPFILE sit at their highest bit; format_open_flags takes
// them out first so that O_DSYNC and O_DIRECTORY are not named twice.
constexpr FlagName kFlagNames[] = {
    {f::kCreate, "O_CREAT"},        {f::kExclusive, "O_EXCL"},      {f::kNoCtty, "O_NOCTTY"},
    {f::kTruncate, "O_TRUNC"},      {f::kAppend, "O_APPEND"},       {f::kNonBlock, "O_NONBLOCK"},
    {f::kDsync, "O_DSYNC"},         {f::kAsync, "O_ASYNC"},         {f::kDirect, "O_DIRECT"},
    {f::kLargeFile, "O_LARGEFILE"}, {f::kDirectory, "O_DIRECTORY"}, {f::kNoFollow, "O_NOFOLLOW"},
    {f::kNoAtime, "O_NOATIME"},     {f::kCloseOnExec, "O_CLOEXEC"}, {f::kSync, "O_SYNC"},
    {f::kPath, "O_PATH"},           {f::kTmpFile, "O_TMPFILE"},
};

void octal(uint32_t value, TextBuffer& out) {
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  } while (value != 0);
  out.chr('0');
  while (n > 0) out.chr(digits[--n]);
}

}  // namespace

const char* resource_kind_name(result::ResourceKind kind) {
  switch (kind) {
    case result::ResourceKind::kFile:
      return "file";
    case result::ResourceKind::kDirectory:
      return "directory";
    case result::ResourceKind::kSocket:
      return "socket";
    case result::ResourceKind::kPipe:
      return "pipe";
    case result::ResourceKind::kEventfd:
      return "eventfd";
    case result::ResourceKind::kTimerfd:
      return "timerfd";
    case result::ResourceKind::kSignalfd:
      return "signalfd";
    case result::ResourceKind::kEpoll:
      return "epoll";
    case result::ResourceKind::kInotify:
      return "inotify";
    case result::ResourceKind::kMemfd:
      return "memfd";
    case result::ResourceKind::kOther:
      break;
  }
  return "other";
}

const char* resource_call_name(result::ResourceCall call) {
  using C = result::ResourceCall;
  switch (call) {
    case C::kOpen:
      return "open";
    case C::kOpenat:
      return "openat";
    case C::kCreat:
      return "creat";
    case C::kDup:
      return "dup";
    case C::kDup2:
      return "dup2";
    case C::kDup3:
      return "dup3";
    case C::kFcntl:
      return "fcntl";
    case C::kPipe:
      return "pipe";
    case C::kPipe2:
      return "pipe2";
    case C::kSocket:
      return "socket";
    case C::kSocketpair:
      return "socketpair";
    case C::kAccept:
      return "accept";
    case C::kAccept4:
      return "accept4";
    case C::kEventfd:
      return "eventfd";
    case C::kTimerfdCreate:
      return "timerfd_create";
    case C::kSignalfd:
      return "signalfd";
    case C::kEpollCreate:
      return "epoll_create";
    case C::kEpollCreate1:
      return "epoll_create1";
    case C::kInotifyInit:
      return "inotify_init";
    case C::kInotifyInit1:
      return "inotify_init1";
    case C::kMemfdCreate:
      return "memfd_create";
    case C::kFopen:
      return "fopen";
    case C::kFdopen:
      return "fdopen";
    case C::kFreopen:
      return "freopen";
  }
  return nullptr;
}

void format_open_flags(uint32_t flags, TextBuffer& out) {
  static const char* const kAccess[] = {"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"};
  out.str(kAccess[flags & f::kAccessMode]);
  uint32_t rest = flags & ~f::kAccessMode;
  // The composite flags are found before their parts would be named on their own.
  uint32_t composites = 0;
  static const uint32_t kComposites[] = {f::kSync, f::kTmpFile};
  for (uint32_t composite : kComposites) {
    if ((rest & composite) == composite) {
      composites |= composite;
      rest &= ~composite;
    }
  }
  for (const FlagName& flag : kFlagNames) {
    bool composite = flag.value == f::kSync || flag.value == f::kTmpFile;
    bool present =
        composite ? (composites & flag.value) == flag.value : (rest & flag.value) == flag.value;
    if (!present) continue;
    out.chr('|').str(flag.name);
    if (!composite) rest &= ~flag.value;
  }
  if (rest != 0) {
    out.chr('|');
    octal(rest, out);
  }
}

uint32_t open_flags_of_mode(const char* mode) {
  if (mode == nullptr) return f::kReadOnly;
  uint32_t flags = 0;
  switch (mode[0]) {
    case 'r':
      flags = f::kReadOnly;
      break;
    case 'w':
      flags = f::kWriteOnly | f::kCreate | f::kTruncate;
      break;
    case 'a':
      flags = f::kWriteOnly | f::kCreate | f::kAppend;
      break;
    default:
      return f::kReadOnly;
  }
  // glibc reads at most 6 more characters and stops at ','.
  for (int i = 1; i < 7 && mode[i] != '\0' && mode[i] != ','; ++i) {
    switch (mode[i]) {
      case '+':
        flags = (flags & ~f::kAccessMode) | f::kReadWrite;
        break;
      case 'x':
        flags |= f::kExclusive;
        break;
      case 'e':
        flags |= f::kCloseOnExec;
        break;
      default:
        break;  // 'b', 'c', 'm': nothing the kernel sees
    }
  }
  return flags;
}

size_t copy_stream_mode(const char* mode, char* out, size_t out_size) {
  if (out_size == 0) return 0;
  size_t n = 0;
  for (const char* p = mode; p != nullptr && *p != '\0' && *p != ','; ++p) {
    if (n + 1 >= out_size) break;
    char c = *p;
    if (c < 0x21 || c > 0x7e || c == '"' || c == '\\') continue;
    out[n++] = c;
  }
  out[n] = '\0';
  return n;
}

}  // namespace memtrack::core
