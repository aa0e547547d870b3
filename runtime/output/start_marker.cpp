// The start marker (start_marker.h). Calls libc open/write/close; no malloc.
#include "runtime/output/start_marker.h"

#include <fcntl.h>
#include <unistd.h>

#include "core/flags.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/output/process_info.h"
#include "runtime/runtime.h"

namespace memtrack::rt {

void write_start_marker() {
  if (g_flags.result_dir[0] == '\0') return;
  core::FixedText<core::kMaxFlagStringLength + 64> path;
  path.str(g_flags.result_dir).str("/memtrack.").i64(core::sys::current_pid()).str(".started");
  int fd = open(path.data(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  core::FixedText<32> ppid;
  ppid.i64(getppid()).chr('\n');
  size_t size = 0;
  const char* command = command_line(&size);
  bool ok = core::sys::write_all(fd, ppid.data(), ppid.size());
  if (ok && size > 0) core::sys::write_all(fd, command, size);
  close(fd);
}

}  // namespace memtrack::rt
