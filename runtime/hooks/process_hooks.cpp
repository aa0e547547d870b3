// The entry points that see processes start and end and modules go: __libc_start_main (to
// learn the status main returns), exit, fork (to mark the child started), and dlclose. Calls
// libc but never malloc.
#include <unistd.h>

#include "core/result_format.h"
#include "core/sys_linux.h"
#include "runtime/hooks/export.h"
#include "runtime/hooks/init.h"
#include "runtime/link/real_functions.h"
#include "runtime/output/modules.h"
#include "runtime/output/process_info.h"
#include "runtime/output/start_marker.h"
#include "runtime/runtime.h"
#include "runtime/unwind/fast_unwind.h"

namespace rt = memtrack::rt;

// glibc's start-up calls main and then its internal exit(), which no interposer sees; wrapping
// main here is the only way to learn the status main returns.
MEMTRACK_EXPORT_C int __libc_start_main(int (*main)(int, char**, char**), int argc, char** argv,
                                        void (*init)(), void (*fini)(), void (*rtld_fini)(),
                                        void* stack_end) {
  rt::ensure_initialized();  // the constructor has normally run already
  return rt::g_real.start_main(rt::wrap_main(main), argc, argv, init, fini, rtld_fini, stack_end);
}

MEMTRACK_EXPORT_C __attribute__((noreturn)) void exit(int status) {
  rt::ensure_initialized();
  rt::note_exit_stack(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  rt::set_exit_record(memtrack::core::result::ExitHow::kExit, status);
  rt::g_real.exit_process(status);
  __builtin_unreachable();
}

// The parent writes the child's start marker before fork returns to it: the child's own fork
// handler may not run before the parent exits and `memtrack run` looks (a daemon's middle
// process that exits at once), and then the daemon would not be listed as still running.
// vfork, posix_spawn and clone children are not marked here: they run no fork handler and
// mark themselves when their exec'd image starts under the runtime.
MEMTRACK_EXPORT_C pid_t fork() noexcept {
  pid_t pid = rt::g_lazy_real.fork.get()();
  if (pid > 0 && !rt::in_runtime() && rt::initialized() && !rt::g_flags.silent_after_fork) {
    int saved_errno = memtrack::core::sys::get_errno();
    rt::RuntimeScope scope;
    rt::write_forked_start_marker(pid, memtrack::core::sys::current_pid());
    memtrack::core::sys::set_errno(saved_errno);
  }
  return pid;
}

// dlclose may unmap the library; remember where it was so its frames still symbolize, and
// forget the unwind rules cached for its code, whose addresses a later dlopen may reuse.
MEMTRACK_EXPORT_C int dlclose(void* handle) {
  if (!rt::in_runtime() && rt::ensure_initialized()) {
    rt::RuntimeScope scope;
    rt::remember_before_dlclose(handle);
  }
  int result = rt::g_real.dlclose(handle);
  if (rt::initialized()) rt::forget_unwind_rules();
  return result;
}
