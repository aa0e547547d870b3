// The start marker (start_marker.h). Calls libc open/write/close/rename; no malloc.
#include "runtime/output/start_marker.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "core/flags.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/output/process_info.h"
#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

using MarkerPath = core::FixedText<core::kMaxFlagStringLength + 64>;

MarkerPath marker_path(int pid) {
  MarkerPath path;
  path.str(g_flags.result_dir).str("/memtrack.").i64(pid).str(".started");
  return path;
}

// Writes the marker's content to `fd` and closes it. Returns false if a write failed.
bool write_content_and_close(int fd, int ppid) {
  core::FixedText<32> parent;
  parent.i64(ppid).chr('\n');
  size_t size = 0;
  const char* command = command_line(&size);
  bool ok = core::sys::write_all(fd, parent.data(), parent.size());
  if (ok && size > 0) ok = core::sys::write_all(fd, command, size);
  close(fd);
  return ok;
}

}  // namespace

// A thread's id is unique while it runs, so the file written aside is this writer's alone;
// its name starts with '.', which the CLI never takes for a marker or a result.
void write_start_marker() {
  if (g_flags.result_dir[0] == '\0') return;
  MarkerPath path = marker_path(core::sys::current_pid());
  MarkerPath aside;
  aside.str(g_flags.result_dir).str("/.memtrack.").i64(core::sys::current_tid()).str(".writing");
  int fd = open(aside.data(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (!write_content_and_close(fd, getppid()) || rename(aside.data(), path.data()) != 0) {
    unlink(aside.data());
  }
}

// O_EXCL: the parent's hook and the child's fork handler may both write, in either order.
// If the child exec's while the parent writes, the new image's marker is renamed over the
// parent's (whose file the parent then finishes unlinked), or the parent finds it and stops.
void write_forked_start_marker(int pid, int ppid) {
  if (g_flags.result_dir[0] == '\0') return;
  MarkerPath path = marker_path(pid);
  int fd = open(path.data(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;
  write_content_and_close(fd, ppid);
}

}  // namespace memtrack::rt
