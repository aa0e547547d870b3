// Shared by the descriptor, stream and exec hooks (fd_hooks.cpp,
// stream_hooks.cpp, exec_hooks.cpp): the real functions they forward to and
// the helpers that record what they open. Internal to those files; libc types only.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>

#include <spawn.h>

#include "core/result_format.h"
#include "runtime/fd/fd_table.h"

namespace memtrack::rt {

// dlsym(RTLD_NEXT, name) inside the runtime scope (dlsym may allocate). nullptr if the next
// object does not define `name` (an older glibc).
void* resolve_next(const char* name);

// A real function, resolved on first use: a hook may run before start-up has finished (the
// runtime's own start-up opens files), and then still needs its real function. Constant-
// initialised, so it works before any constructor. Thread safe (racing resolutions agree).
template <typename Fn>
class RealFunction {
 public:
  explicit constexpr RealFunction(const char* name) : name_(name) {}
  Fn get() {
    Fn fn = fn_.load(std::memory_order_acquire);
    if (__builtin_expect(fn == nullptr, 0)) {
      fn = reinterpret_cast<Fn>(resolve_next(name_));
      fn_.store(fn, std::memory_order_release);
    }
    return fn;
  }

 private:
  const char* name_;
  std::atomic<Fn> fn_{nullptr};
};

// The descriptor and stream functions the hooks forward to (a struct of its own, apart from
// RealFunctions in runtime.h). Types spelled out so they do not depend on which of the
// hooks a file defines.
struct FdRealFunctions {
  RealFunction<int (*)(const char*, int, ...)> open{"open"};
  RealFunction<int (*)(const char*, int, ...)> open64{"open64"};
  RealFunction<int (*)(int, const char*, int, ...)> openat{"openat"};
  RealFunction<int (*)(int, const char*, int, ...)> openat64{"openat64"};
  RealFunction<int (*)(const char*, int)> open_2{"__open_2"};
  RealFunction<int (*)(const char*, int)> open64_2{"__open64_2"};
  RealFunction<int (*)(int, const char*, int)> openat_2{"__openat_2"};
  RealFunction<int (*)(int, const char*, int)> openat64_2{"__openat64_2"};
  RealFunction<int (*)(const char*, unsigned)> creat{"creat"};
  RealFunction<int (*)(const char*, unsigned)> creat64{"creat64"};
  RealFunction<int (*)(int)> dup{"dup"};
  RealFunction<int (*)(int, int)> dup2{"dup2"};
  RealFunction<int (*)(int, int, int)> dup3{"dup3"};
  RealFunction<int (*)(int, int, ...)> fcntl{"fcntl"};
  RealFunction<int (*)(int, int, ...)> fcntl64{"fcntl64"};
  RealFunction<int (*)(int*)> pipe{"pipe"};
  RealFunction<int (*)(int*, int)> pipe2{"pipe2"};
  RealFunction<int (*)(int, int, int)> socket{"socket"};
  RealFunction<int (*)(int, int, int, int*)> socketpair{"socketpair"};
  RealFunction<int (*)(int, void*, void*)> accept{"accept"};
  RealFunction<int (*)(int, void*, void*, int)> accept4{"accept4"};
  RealFunction<int (*)(unsigned, int)> eventfd{"eventfd"};
  RealFunction<int (*)(int, int)> timerfd_create{"timerfd_create"};
  RealFunction<int (*)(int, const void*, int)> signalfd{"signalfd"};
  RealFunction<int (*)(int)> epoll_create{"epoll_create"};
  RealFunction<int (*)(int)> epoll_create1{"epoll_create1"};
  RealFunction<int (*)()> inotify_init{"inotify_init"};
  RealFunction<int (*)(int)> inotify_init1{"inotify_init1"};
  RealFunction<int (*)(const char*, unsigned)> memfd_create{"memfd_create"};
  RealFunction<int (*)(int)> close{"close"};
  RealFunction<int (*)(unsigned, unsigned, int)> close_range{"close_range"};
  RealFunction<void (*)(int)> closefrom{"closefrom"};
  RealFunction<FILE* (*)(const char*, const char*)> fopen{"fopen"};
  RealFunction<FILE* (*)(const char*, const char*)> fopen64{"fopen64"};
  RealFunction<FILE* (*)(int, const char*)> fdopen{"fdopen"};
  RealFunction<FILE* (*)(const char*, const char*, FILE*)> freopen{"freopen"};
  RealFunction<FILE* (*)(const char*, const char*, FILE*)> freopen64{"freopen64"};
  RealFunction<int (*)(FILE*)> fclose{"fclose"};
  RealFunction<int (*)()> fcloseall{"fcloseall"};
  RealFunction<int (*)(const char*, char* const*, char* const*)> execve{"execve"};
  RealFunction<int (*)(const char*, char* const*, char* const*)> execvpe{"execvpe"};
  RealFunction<int (*)(int, char* const*, char* const*)> fexecve{"fexecve"};
  RealFunction<int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                       const posix_spawnattr_t*, char* const*, char* const*)>
      posix_spawn{"posix_spawn"};
  RealFunction<int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                       const posix_spawnattr_t*, char* const*, char* const*)>
      posix_spawnp{"posix_spawnp"};
};
extern FdRealFunctions g_fd_real;

// Resolves every function of g_fd_real now, at start-up, rather than inside some later call
// (from a signal handler, say).
void resolve_fd_functions();

// True if a descriptor call just made for the program should change the table: the caller
// (the hook's return address) is not the runtime itself, the calling thread is not inside
// the runtime, and track_fds is on. Finishes start-up if needed. Keeps errno.
bool fd_tracking(uintptr_t caller);

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

// Keeps errno across the work a hook does after its real call.
class ErrnoKeeper {
 public:
  ErrnoKeeper();
  ~ErrnoKeeper();
  ErrnoKeeper(const ErrnoKeeper&) = delete;
  ErrnoKeeper& operator=(const ErrnoKeeper&) = delete;

 private:
  int saved_;
};

}  // namespace memtrack::rt

// The return address of the hook: where the program (or the runtime) called it.
#define MEMTRACK_CALLER reinterpret_cast<uintptr_t>(__builtin_return_address(0))
