// The real functions the hooks forward to, found by resolve_next (real_functions.h): with
// dlsym in libmemtrack.so (resolve_dlsym.cpp), from the linker's __real_ symbols in the
// link-time archive (resolve_linked.cpp). Never calls malloc itself.
#include "runtime/hooks/real_functions.h"

#include "runtime/runtime.h"

namespace memtrack::rt {

RealFunctions g_real;
FdRealFunctions g_fd_real;

namespace {

template <typename Fn>
void resolve(Fn*& slot, const char* name) {
  slot = reinterpret_cast<Fn*>(resolve_next(name));
}

}  // namespace

void resolve_allocator_functions() {
  resolve(g_real.free, "free");
  resolve(g_real.calloc, "calloc");
  resolve(g_real.realloc, "realloc");
  resolve(g_real.posix_memalign, "posix_memalign");
  resolve(g_real.aligned_alloc, "aligned_alloc");
  resolve(g_real.memalign, "memalign");
  resolve(g_real.valloc, "valloc");
  resolve(g_real.pvalloc, "pvalloc");
  resolve(g_real.malloc_usable_size, "malloc_usable_size");
  resolve(g_real.exit_now, "_exit");
  resolve(g_real.exit_now_upper, "_Exit");
  resolve(g_real.exit_process, "exit");
  resolve(g_real.start_main, "__libc_start_main");
  resolve(g_real.dlclose, "dlclose");
  // malloc last: the hooks treat a resolved malloc as "real functions are usable".
  resolve(g_real.malloc, "malloc");
}

void resolve_fd_functions() {
  RuntimeScope scope;
  g_fd_real.open.get();
  g_fd_real.open64.get();
  g_fd_real.openat.get();
  g_fd_real.openat64.get();
  g_fd_real.open_2.get();
  g_fd_real.open64_2.get();
  g_fd_real.openat_2.get();
  g_fd_real.openat64_2.get();
  g_fd_real.creat.get();
  g_fd_real.creat64.get();
  g_fd_real.dup.get();
  g_fd_real.dup2.get();
  g_fd_real.dup3.get();
  g_fd_real.fcntl.get();
  g_fd_real.fcntl64.get();
  g_fd_real.pipe.get();
  g_fd_real.pipe2.get();
  g_fd_real.socket.get();
  g_fd_real.socketpair.get();
  g_fd_real.accept.get();
  g_fd_real.accept4.get();
  g_fd_real.eventfd.get();
  g_fd_real.timerfd_create.get();
  g_fd_real.signalfd.get();
  g_fd_real.epoll_create.get();
  g_fd_real.epoll_create1.get();
  g_fd_real.inotify_init.get();
  g_fd_real.inotify_init1.get();
  g_fd_real.memfd_create.get();
  g_fd_real.close.get();
  g_fd_real.close_range.get();
  g_fd_real.closefrom.get();
  g_fd_real.fopen.get();
  g_fd_real.fopen64.get();
  g_fd_real.fdopen.get();
  g_fd_real.freopen.get();
  g_fd_real.freopen64.get();
  g_fd_real.fclose.get();
  g_fd_real.fcloseall.get();
  g_fd_real.execve.get();
  g_fd_real.execvpe.get();
  g_fd_real.fexecve.get();
  g_fd_real.posix_spawn.get();
  g_fd_real.posix_spawnp.get();
  g_fd_real.fork.get();
}

}  // namespace memtrack::rt
