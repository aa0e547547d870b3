// Where the standalone report goes (log_file.h). Calls libc (open) but never malloc.
#include "runtime/output/log_file.h"

#include <errno.h>

#include "core/sys_linux.h"
#include "runtime/diag.h"
#include "runtime/runtime.h"

namespace memtrack::rt {

// Expands %p to the pid; "%%" is a literal '%'.
void expand_log_path(const char* pattern, core::TextBuffer& path) {
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (p[0] == '%' && p[1] == 'p') {
      path.i64(core::sys::current_pid());
      ++p;
    } else if (p[0] == '%' && p[1] == '%') {
      path.chr('%');
      ++p;
    } else {
      path.chr(*p);
    }
  }
}

// Live reports go to the log as they come, so with them the exit report appends too.
int open_log_fd() {
  if (g_flags.log_file[0] == '\0') return 2;
  core::FixedText<core::kMaxFlagStringLength + 32> path;
  expand_log_path(g_flags.log_file, path);
  int fd = g_flags.expire_ms > 0 ? core::sys::open_for_append(path.data())
                                 : core::sys::open_for_write(path.data());
  if (fd < 0) {
    core::FixedText<512> message;
    message.str("warning: cannot open log_file '").str(path.data()).str("' (errno ");
    message.i64(errno).str("); writing the report to stderr");
    diag(message.data());
    return 2;
  }
  return fd;
}

}  // namespace memtrack::rt
