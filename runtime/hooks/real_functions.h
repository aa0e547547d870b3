// The one table of real functions the hooks forward to, and the one way they are found:
// dlsym(RTLD_NEXT) inside the runtime scope (resolve_next). Internal to hooks/; libc types
// only. Runtime-safe: no malloc of its own (dlsym's is served by the bootstrap arena).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>

#include <spawn.h>

namespace memtrack::rt {

// The definition `name` had before the runtime's hook took its place: dlsym(RTLD_NEXT, name)
// inside the runtime scope (dlsym may allocate) in libmemtrack.so (resolve_dlsym.cpp); the
// linker's __real_<name> in the link-time archive (resolve_linked.cpp). nullptr if there is
// none (an older glibc, or a function the static link left out).
void* resolve_next(const char* name);
// dlsym(RTLD_DEFAULT, name) inside the runtime scope: a function of a library the program may
// load later (libstdc++ in a C program that dlopens C++ code). In the link-time archive: the
// function if the static link holds it.
void* resolve_default(const char* name);

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

// The allocator functions the runtime forwards to, resolved with dlsym(RTLD_NEXT).
struct RealFunctions {
  void* (*malloc)(size_t);
  void (*free)(void*);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  size_t (*malloc_usable_size)(void*);
  void (*exit_now)(int);        // _exit
  void (*exit_now_upper)(int);  // _Exit
  void (*exit_process)(int);    // exit
  int (*start_main)(int (*)(int, char**, char**), int, char**, void (*)(), void (*)(), void (*)(),
                    void*);  // __libc_start_main
  int (*dlclose)(void*);
};
extern RealFunctions g_real;

// Resolves every function of g_real, malloc last: the hooks treat a resolved malloc as "the
// real functions are usable". Called once, by the initialising thread, in the runtime scope.
void resolve_allocator_functions();

// The descriptor, stream, exec and fork functions, resolved on first use (a descriptor hook may run
// before start-up has finished). Types spelled out so they do not depend on which of the
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
  RealFunction<pid_t (*)()> fork{"fork"};
};
extern FdRealFunctions g_fd_real;

// Resolves every function of g_fd_real now, at start-up, rather than inside some later call
// (from a signal handler, say).
void resolve_fd_functions();

}  // namespace memtrack::rt
