// The descriptor entry points, interposed with LD_PRELOAD: open, open64, openat, openat64,
// their fortified forms (__open_2, ...), creat, creat64, dup, dup2, dup3, fcntl and fcntl64
// (F_DUPFD, F_DUPFD_CLOEXEC), pipe, pipe2, socket, socketpair, accept, accept4, eventfd,
// timerfd_create, signalfd, epoll_create, epoll_create1, inotify_init, inotify_init1,
// memfd_create, close, close_range and closefrom. Each calls the real function and returns
// what it returned, with its errno; what it created is recorded afterwards, what it closes
// is erased before (fd_table.h says why). Calls made by the runtime itself pass straight
// through. Calls libc (dlsym, fcntl) but never malloc.
#undef _FORTIFY_SOURCE  // the fortified open() is an inline wrapper we could not define
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/fd_names.h"
#include "runtime/fd/fd_paths.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/hooks/entry.h"
#include "runtime/hooks/export.h"
#include "runtime/hooks/fd_record.h"
#include "runtime/hooks/init.h"
#include "runtime/link/real_functions.h"
#include "runtime/output/modules.h"
#include "runtime/output/profile_output.h"
#include "runtime/output/trace_log.h"
#include "runtime/record/profile.h"
#include "runtime/runtime.h"

namespace memtrack::rt {}  // namespace memtrack::rt

namespace {

namespace rt = memtrack::rt;
namespace of = memtrack::core::open_flags;
using Call = memtrack::core::result::ResourceCall;

// The kernel's creation flags share O_NONBLOCK's and O_CLOEXEC's values, so they are
// stored as open(2) flags. MFD_CLOEXEC is the exception (mapped below).
static_assert(SOCK_NONBLOCK == O_NONBLOCK && SOCK_CLOEXEC == O_CLOEXEC);
static_assert(EFD_NONBLOCK == O_NONBLOCK && EFD_CLOEXEC == O_CLOEXEC);
static_assert(TFD_NONBLOCK == O_NONBLOCK && TFD_CLOEXEC == O_CLOEXEC);
static_assert(SFD_NONBLOCK == O_NONBLOCK && SFD_CLOEXEC == O_CLOEXEC);
static_assert(IN_NONBLOCK == O_NONBLOCK && IN_CLOEXEC == O_CLOEXEC);
static_assert(EPOLL_CLOEXEC == O_CLOEXEC);
constexpr uint32_t kCreationFlags = O_NONBLOCK | O_CLOEXEC;

// Returns fd, after recording it if it is a descriptor and the caller is tracked.
// `path`: as the program passed it (open, openat, creat), for the reports.
int created(int fd, Call call, uint32_t flags, uintptr_t caller, const char* path = nullptr) {
  if (fd < 0 || !rt::fd_tracking(caller)) return fd;
  if (call == Call::kOpen || call == Call::kOpenat || call == Call::kCreat) {
    rt::remember_fd_path(fd, path);
  }
  rt::note_open(fd, call, flags, nullptr);
  return fd;
}

void created_pair(int result, const int* fds, Call call, uint32_t flags0, uint32_t flags1,
                  uintptr_t caller) {
  if (result != 0 || !rt::fd_tracking(caller)) return;
  rt::note_open(fds[0], call, flags0, nullptr);
  rt::note_open(fds[1], call, flags1, nullptr);
}

// A copy of `old` made as `fd`: it shares old's open file description, so it has old's
// flags (without O_CLOEXEC, which belongs to the descriptor) plus `cloexec`.
int copied(int fd, int old, Call call, uint32_t cloexec, uintptr_t caller) {
  if (fd < 0 || !rt::fd_tracking(caller)) return fd;
  rt::ErrnoKeeper keep;
  uint32_t flags = 0;
  rt::FdInfo source;
  bool known = false;
  {
    rt::RuntimeScope scope;
    known = rt::g_fds.lookup(old, &source);
    if (!known) flags = static_cast<uint32_t>(rt::g_lazy_real.fcntl.get()(fd, F_GETFL));
  }
  flags = known ? source.flags : flags & ~of::kLargeFile;
  rt::note_open(fd, call, (flags & ~of::kCloseOnExec) | cloexec, nullptr);
  return fd;
}

bool needs_mode(int flags) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

// dup2 and dup3 close `target` if it is open: erased first, put back if the call fails
// (then it closed nothing).
template <typename Fn>
int duplicate_onto(Fn real, int old, int target, Call call, uint32_t cloexec, uintptr_t caller) {
  if (old == target || !rt::fd_tracking(caller)) return real();  // dup2(fd, fd) changes nothing
  rt::FdInfo saved;
  bool had = rt::forget_fd(target, &saved);
  int fd = real();
  if (fd < 0) {
    rt::ErrnoKeeper keep;
    if (had) rt::restore_fd(target, saved);
    return fd;
  }
  return copied(fd, old, call, cloexec, caller);
}

int fcntl_impl(int (*real)(int, int, ...), int fd, int cmd, void* arg, uintptr_t caller) {
  int result = real(fd, cmd, arg);
  if (cmd == F_DUPFD) return copied(result, fd, Call::kFcntl, 0, caller);
  if (cmd == F_DUPFD_CLOEXEC) return copied(result, fd, Call::kFcntl, O_CLOEXEC, caller);
  return result;
}

int missing_function() {
  errno = ENOSYS;
  return -1;
}

}  // namespace

// open's mode argument is read only when the flags say it was passed (as glibc does).
#define MEMTRACK_MODE_ARG(last, flags) \
  int mode = 0;                        \
  if (needs_mode(flags)) {             \
    va_list args;                      \
    va_start(args, last);              \
    mode = va_arg(args, int);          \
    va_end(args);                      \
  }

MEMTRACK_EXPORT_C int open(const char* path, int flags, ...) {
  MEMTRACK_MODE_ARG(flags, flags);
  return created(rt::g_lazy_real.open.get()(path, flags, mode), Call::kOpen, flags, MEMTRACK_CALLER,
                 path);
}

MEMTRACK_EXPORT_C int open64(const char* path, int flags, ...) {
  MEMTRACK_MODE_ARG(flags, flags);
  return created(rt::g_lazy_real.open64.get()(path, flags, mode), Call::kOpen, flags,
                 MEMTRACK_CALLER, path);
}

MEMTRACK_EXPORT_C int openat(int dir, const char* path, int flags, ...) {
  MEMTRACK_MODE_ARG(flags, flags);
  return created(rt::g_lazy_real.openat.get()(dir, path, flags, mode), Call::kOpenat, flags,
                 MEMTRACK_CALLER, path);
}

MEMTRACK_EXPORT_C int openat64(int dir, const char* path, int flags, ...) {
  MEMTRACK_MODE_ARG(flags, flags);
  return created(rt::g_lazy_real.openat64.get()(dir, path, flags, mode), Call::kOpenat, flags,
                 MEMTRACK_CALLER, path);
}

// What -D_FORTIFY_SOURCE makes of open() when the flags are not known at compile time.
MEMTRACK_EXPORT_C int __open_2(const char* path, int flags) {
  return created(rt::g_lazy_real.open_2.get()(path, flags), Call::kOpen, flags, MEMTRACK_CALLER,
                 path);
}

MEMTRACK_EXPORT_C int __open64_2(const char* path, int flags) {
  return created(rt::g_lazy_real.open64_2.get()(path, flags), Call::kOpen, flags, MEMTRACK_CALLER,
                 path);
}

MEMTRACK_EXPORT_C int __openat_2(int dir, const char* path, int flags) {
  return created(rt::g_lazy_real.openat_2.get()(dir, path, flags), Call::kOpenat, flags,
                 MEMTRACK_CALLER, path);
}

MEMTRACK_EXPORT_C int __openat64_2(int dir, const char* path, int flags) {
  return created(rt::g_lazy_real.openat64_2.get()(dir, path, flags), Call::kOpenat, flags,
                 MEMTRACK_CALLER, path);
}

MEMTRACK_EXPORT_C int creat(const char* path, mode_t mode) {
  return created(rt::g_lazy_real.creat.get()(path, mode), Call::kCreat,
                 O_WRONLY | O_CREAT | O_TRUNC, MEMTRACK_CALLER, path);
}

MEMTRACK_EXPORT_C int creat64(const char* path, mode_t mode) {
  return created(rt::g_lazy_real.creat64.get()(path, mode), Call::kCreat,
                 O_WRONLY | O_CREAT | O_TRUNC, MEMTRACK_CALLER, path);
}

MEMTRACK_EXPORT_C int dup(int old) noexcept {
  return copied(rt::g_lazy_real.dup.get()(old), old, Call::kDup, 0, MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int dup2(int old, int target) noexcept {
  auto real = [=] { return rt::g_lazy_real.dup2.get()(old, target); };
  return duplicate_onto(real, old, target, Call::kDup2, 0, MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int dup3(int old, int target, int flags) noexcept {
  auto real = [=] { return rt::g_lazy_real.dup3.get()(old, target, flags); };
  return duplicate_onto(real, old, target, Call::kDup3, static_cast<uint32_t>(flags) & O_CLOEXEC,
                        MEMTRACK_CALLER);
}

// The third argument is forwarded as glibc's own fcntl reads it: one pointer-sized value,
// which carries an int, a pointer or nothing, depending on the command.
MEMTRACK_EXPORT_C int fcntl(int fd, int cmd, ...) {
  va_list args;
  va_start(args, cmd);
  void* arg = va_arg(args, void*);
  va_end(args);
  return fcntl_impl(rt::g_lazy_real.fcntl.get(), fd, cmd, arg, MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int fcntl64(int fd, int cmd, ...) {
  va_list args;
  va_start(args, cmd);
  void* arg = va_arg(args, void*);
  va_end(args);
  auto real = rt::g_lazy_real.fcntl64.get();
  if (real == nullptr) real = rt::g_lazy_real.fcntl.get();  // glibc before 2.28
  return fcntl_impl(real, fd, cmd, arg, MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int pipe(int fds[2]) noexcept {
  int result = rt::g_lazy_real.pipe.get()(fds);
  created_pair(result, fds, Call::kPipe, O_RDONLY, O_WRONLY, MEMTRACK_CALLER);
  return result;
}

MEMTRACK_EXPORT_C int pipe2(int fds[2], int flags) noexcept {
  int result = rt::g_lazy_real.pipe2.get()(fds, flags);
  auto shared = static_cast<uint32_t>(flags) & (kCreationFlags | O_DIRECT);
  created_pair(result, fds, Call::kPipe2, O_RDONLY | shared, O_WRONLY | shared, MEMTRACK_CALLER);
  return result;
}

MEMTRACK_EXPORT_C int socket(int domain, int type, int protocol) noexcept {
  return created(rt::g_lazy_real.socket.get()(domain, type, protocol), Call::kSocket,
                 O_RDWR | (static_cast<uint32_t>(type) & kCreationFlags), MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int socketpair(int domain, int type, int protocol, int fds[2]) noexcept {
  int result = rt::g_lazy_real.socketpair.get()(domain, type, protocol, fds);
  uint32_t flags = O_RDWR | (static_cast<uint32_t>(type) & kCreationFlags);
  created_pair(result, fds, Call::kSocketpair, flags, flags, MEMTRACK_CALLER);
  return result;
}

MEMTRACK_EXPORT_C int accept(int fd, sockaddr* __restrict address, socklen_t* __restrict length) {
  return created(rt::g_lazy_real.accept.get()(fd, address, length), Call::kAccept, O_RDWR,
                 MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int accept4(int fd, sockaddr* __restrict address, socklen_t* __restrict length,
                              int flags) {
  return created(rt::g_lazy_real.accept4.get()(fd, address, length, flags), Call::kAccept4,
                 O_RDWR | (static_cast<uint32_t>(flags) & kCreationFlags), MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int eventfd(unsigned int count, int flags) noexcept {
  return created(rt::g_lazy_real.eventfd.get()(count, flags), Call::kEventfd,
                 O_RDWR | (static_cast<uint32_t>(flags) & kCreationFlags), MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int timerfd_create(clockid_t clock, int flags) noexcept {
  return created(rt::g_lazy_real.timerfd_create.get()(clock, flags), Call::kTimerfdCreate,
                 O_RDWR | (static_cast<uint32_t>(flags) & kCreationFlags), MEMTRACK_CALLER);
}

// signalfd(-1, ...) creates a descriptor; signalfd(fd, ...) changes the mask of fd.
MEMTRACK_EXPORT_C int signalfd(int fd, const sigset_t* mask, int flags) noexcept {
  int result = rt::g_lazy_real.signalfd.get()(fd, mask, flags);
  if (fd != -1) return result;
  return created(result, Call::kSignalfd, O_RDWR | (static_cast<uint32_t>(flags) & kCreationFlags),
                 MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int epoll_create(int size) noexcept {
  return created(rt::g_lazy_real.epoll_create.get()(size), Call::kEpollCreate, O_RDWR,
                 MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int epoll_create1(int flags) noexcept {
  return created(rt::g_lazy_real.epoll_create1.get()(flags), Call::kEpollCreate1,
                 O_RDWR | (static_cast<uint32_t>(flags) & O_CLOEXEC), MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int inotify_init() noexcept {
  return created(rt::g_lazy_real.inotify_init.get()(), Call::kInotifyInit, O_RDONLY,
                 MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int inotify_init1(int flags) noexcept {
  return created(rt::g_lazy_real.inotify_init1.get()(flags), Call::kInotifyInit1,
                 O_RDONLY | (static_cast<uint32_t>(flags) & kCreationFlags), MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int memfd_create(const char* name, unsigned int flags) noexcept {
  auto real = rt::g_lazy_real.memfd_create.get();
  if (real == nullptr) return missing_function();
  return created(real(name, flags), Call::kMemfdCreate,
                 O_RDWR | ((flags & MFD_CLOEXEC) != 0 ? O_CLOEXEC : 0), MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C int close(int fd) {
  if (fd >= 0 && rt::fd_tracking(MEMTRACK_CALLER)) rt::forget_fd(fd, nullptr);
  return rt::g_lazy_real.close.get()(fd);
}

// Erased before the call, whose only failures (bad flags, first > last, no memory to
// unshare) close nothing: the first two are checked here, the last is rare enough to accept.
MEMTRACK_EXPORT_C int close_range(unsigned int first, unsigned int last, int flags) noexcept {
  auto real = rt::g_lazy_real.close_range.get();
  if (real == nullptr) return missing_function();
  bool closes = (flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) == 0 &&
                (flags & CLOSE_RANGE_CLOEXEC) == 0 && first <= last;
  if (closes && rt::fd_tracking(MEMTRACK_CALLER)) {
    rt::RuntimeScope scope;
    rt::g_fds.erase_range(first, last);
  }
  return real(first, last, flags);
}

MEMTRACK_EXPORT_C void closefrom(int lowest) noexcept {
  auto real = rt::g_lazy_real.closefrom.get();
  if (real == nullptr) return;
  if (rt::fd_tracking(MEMTRACK_CALLER)) {
    rt::RuntimeScope scope;
    rt::g_fds.erase_range(lowest < 0 ? 0 : static_cast<unsigned>(lowest), ~0u);
  }
  real(lowest);
}

// Start-up and fork handling of descriptor tracking and the event log. Runs with the other
// library constructors, before the program's own; descriptors opened earlier (by other
// libraries' constructors) are tracked already, the hooks resolve what they need lazily.
namespace memtrack::rt {
namespace {

void fd_fork_prepare() {
  trace_log_fork_prepare();
  profile_fork_prepare();
}

void fd_fork_parent() {
  profile_fork_parent();
  trace_log_fork_parent();
}

void fd_fork_child() {
  // The child handlers of init.cpp may run after this one (their order is the constructors'),
  // and profile_fork_child walks the loader's list: the walk the prepare handler took belongs
  // to a thread of the parent.
  loader_walk_fork_child();
  g_fds.reset_after_fork();
  trace_log_fork_child();
  profile_fork_child();
}

__attribute__((constructor)) void fd_tracking_constructor() {
  if (kAttachRuntime) return;  // descriptors are not tracked while attached
  ErrnoKeeper keep;
  ensure_initialized();
  RuntimeScope scope;
  resolve_lazy_functions();
  pthread_atfork(fd_fork_prepare, fd_fork_parent, fd_fork_child);
  init_trace_log();
  init_profile();
}

}  // namespace
}  // namespace memtrack::rt
