// The exec family (execve, execv, execvp, execvpe, fexecve, execl, execlp, execle) and
// posix_spawn/posix_spawnp, interposed to write the event log's buffered lines before the
// process image, and the buffer with it, is replaced, and to hand on the environment a
// traced child needs (exec_env.h). The execl forms call the execv form with the same
// arguments, as glibc does. Calls libc but never malloc.
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <unistd.h>

#include "core/sys_linux.h"

#include "runtime/hooks/exec_env.h"
#include "runtime/hooks/export.h"
#include "runtime/link/real_functions.h"
#include "runtime/output/start_marker.h"
#include "runtime/output/trace_log.h"
#include "runtime/record/profile.h"
#include "runtime/runtime.h"

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

// Around the real exec: everything the image must do before it may be replaced, and what it
// must undo if the exec fails and it goes on.
class ExecScope {
 public:
  explicit ExecScope(char* const argv[]) {
    rt::trace_log_flush();
    rt::profile_before_exec();
    if (rt::initialized() && !rt::in_runtime()) {
      rt::RuntimeScope scope;
      rt::write_exec_start_marker(argv);  // for an image that will not run the runtime
    }
  }
  ~ExecScope() {  // the exec returned: the process goes on in this image
    int saved_errno = errno;
    if (rt::initialized() && !rt::in_runtime()) {
      rt::RuntimeScope scope;
      rt::undo_exec_start_marker();
    }
    rt::profile_exec_failed();
    errno = saved_errno;
  }
  ExecScope(const ExecScope&) = delete;
  ExecScope& operator=(const ExecScope&) = delete;
};

// A child posix_spawn started: its marker, in case its image never runs the runtime.
void mark_spawned(int result, const pid_t* pid, char* const argv[]) {
  if (result != 0 || pid == nullptr || !rt::initialized() || rt::in_runtime()) return;
  int saved_errno = errno;
  rt::RuntimeScope scope;
  rt::write_spawned_start_marker(*pid, memtrack::core::sys::current_pid(), argv);
  errno = saved_errno;
}

}  // namespace

// Every form goes to execve, execvpe or fexecve with the environment a traced child needs
// (exec_env.h); the forms without an envp use `environ`, as glibc's do.
MEMTRACK_EXPORT_C int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  ExecScope exec(argv);
  rt::TracedEnvironment env(envp);
  return rt::g_lazy_real.execve.get()(path, argv, env.get());
}

MEMTRACK_EXPORT_C int execv(const char* path, char* const argv[]) noexcept {
  return execve(path, argv, environ);
}

MEMTRACK_EXPORT_C int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  ExecScope exec(argv);
  rt::TracedEnvironment env(envp);
  return rt::g_lazy_real.execvpe.get()(file, argv, env.get());
}

MEMTRACK_EXPORT_C int execvp(const char* file, char* const argv[]) noexcept {
  return execvpe(file, argv, environ);
}

MEMTRACK_EXPORT_C int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  ExecScope exec(argv);
  rt::TracedEnvironment env(envp);
  return rt::g_lazy_real.fexecve.get()(fd, argv, env.get());
}

// posix_spawn runs glibc's internal execve, which no hook sees: the environment is handed
// on here (system and popen spawn with `environ`, which still holds memtrack's variables
// unless the program removed them).
MEMTRACK_EXPORT_C int posix_spawn(pid_t* pid, const char* path,
                                  const posix_spawn_file_actions_t* actions,
                                  const posix_spawnattr_t* attributes, char* const argv[],
                                  char* const envp[]) noexcept {
  rt::trace_log_flush();
  rt::profile_flush();
  rt::TracedEnvironment env(envp);
  int result = rt::g_lazy_real.posix_spawn.get()(pid, path, actions, attributes, argv, env.get());
  mark_spawned(result, pid, argv);
  return result;
}

MEMTRACK_EXPORT_C int posix_spawnp(pid_t* pid, const char* file,
                                   const posix_spawn_file_actions_t* actions,
                                   const posix_spawnattr_t* attributes, char* const argv[],
                                   char* const envp[]) noexcept {
  rt::trace_log_flush();
  rt::profile_flush();
  rt::TracedEnvironment env(envp);
  int result = rt::g_lazy_real.posix_spawnp.get()(pid, file, actions, attributes, argv, env.get());
  mark_spawned(result, pid, argv);
  return result;
}

// argv lives on the stack, sized to the arguments, as in glibc's own execl (a VLA: the GNU
// extension glibc uses too).
MEMTRACK_EXPORT_C int execl(const char* path, const char* arg, ...) noexcept {
  va_list args;
  va_start(args, arg);
  size_t n = count_arguments(arg, args);
  char* argv[n];
  take_arguments(arg, args, argv, n, nullptr);
  va_end(args);
  return execv(path, argv);
}

MEMTRACK_EXPORT_C int execlp(const char* file, const char* arg, ...) noexcept {
  va_list args;
  va_start(args, arg);
  size_t n = count_arguments(arg, args);
  char* argv[n];
  take_arguments(arg, args, argv, n, nullptr);
  va_end(args);
  return execvp(file, argv);
}

MEMTRACK_EXPORT_C int execle(const char* path, const char* arg, ...) noexcept {
  va_list args;
  va_start(args, arg);
  size_t n = count_arguments(arg, args);
  char* argv[n];
  char* const* envp = nullptr;
  take_arguments(arg, args, argv, n, &envp);
  va_end(args);
  return execve(path, argv, envp);
}
