// The exec family (execve, execv, execvp, execvpe, fexecve, execl, execlp, execle),
// interposed only to write the event log's buffered lines before the process image, and
// the buffer with it, is replaced. Each then calls the real function (the execl forms the
// execv form with the same arguments, as glibc does). Calls libc but never malloc.
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "runtime/fd_real.h"
#include "runtime/trace_log.h"

namespace {

namespace rt = memtrack::rt;

// The number of execl arguments from `first` up to and including the null pointer that
// ends them (at least 1).
size_t count_arguments(const char* first, va_list args) {
  va_list copy;
  va_copy(copy, args);
  size_t n = 1;
  for (const char* arg = first; arg != nullptr; arg = va_arg(copy, const char*)) ++n;
  va_end(copy);
  return n;
}

// Fills argv (count_arguments entries) and, if envp is not null, reads execle's environment
// after the null pointer.
void take_arguments(const char* first, va_list args, char** argv, size_t n, char* const** envp) {
  argv[0] = const_cast<char*>(first);
  for (size_t i = 1; i < n; ++i) argv[i] = va_arg(args, char*);
  if (envp != nullptr) *envp = va_arg(args, char* const*);
}

}  // namespace

#define MEMTRACK_EXPORT extern "C" __attribute__((visibility("default")))

MEMTRACK_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  rt::trace_log_flush();
  return rt::g_fd_real.execve.get()(path, argv, envp);
}

MEMTRACK_EXPORT int execv(const char* path, char* const argv[]) noexcept {
  rt::trace_log_flush();
  return rt::g_fd_real.execv.get()(path, argv);
}

MEMTRACK_EXPORT int execvp(const char* file, char* const argv[]) noexcept {
  rt::trace_log_flush();
  return rt::g_fd_real.execvp.get()(file, argv);
}

MEMTRACK_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  rt::trace_log_flush();
  return rt::g_fd_real.execvpe.get()(file, argv, envp);
}

MEMTRACK_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  rt::trace_log_flush();
  return rt::g_fd_real.fexecve.get()(fd, argv, envp);
}

// argv lives on the stack, sized to the arguments, as in glibc's own execl (a VLA: the GNU
// extension glibc uses too).
MEMTRACK_EXPORT int execl(const char* path, const char* arg, ...) noexcept {
  va_list args;
  va_start(args, arg);
  size_t n = count_arguments(arg, args);
  char* argv[n];
  take_arguments(arg, args, argv, n, nullptr);
  va_end(args);
  return execv(path, argv);
}

MEMTRACK_EXPORT int execlp(const char* file, const char* arg, ...) noexcept {
  va_list args;
  va_start(args, arg);
  size_t n = count_arguments(arg, args);
  char* argv[n];
  take_arguments(arg, args, argv, n, nullptr);
  va_end(args);
  return execvp(file, argv);
}

MEMTRACK_EXPORT int execle(const char* path, const char* arg, ...) noexcept {
  va_list args;
  va_start(args, arg);
  size_t n = count_arguments(arg, args);
  char* argv[n];
  char* const* envp = nullptr;
  take_arguments(arg, args, argv, n, &envp);
  va_end(args);
  return execve(path, argv, envp);
}
