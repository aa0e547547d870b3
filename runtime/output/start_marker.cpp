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

// This image is a forked copy of its parent (note_forked_copy); an exec starts a new image,
// and with it this flag's initial value.
bool g_forked_copy = false;

MarkerPath marker_path(int pid) {
  MarkerPath path;
  path.str(g_flags.result_dir).str("/memtrack.").i64(pid).str(".started");
  return path;
}

// Writes the marker's first line, then this image's command line (or `argv`'s, each argument
// followed by a NUL as /proc/PID/cmdline has them), to `fd` and closes it. Returns false if a
// write failed.
bool write_content_and_close(int fd, int ppid, const char* origin, char* const* argv = nullptr) {
  core::FixedText<64> parent;
  parent.i64(ppid);
  if (origin != nullptr) parent.chr(' ').str(origin);
  parent.chr('\n');
  bool ok = core::sys::write_all(fd, parent.data(), parent.size());
  if (argv != nullptr) {
    for (char* const* arg = argv; ok && *arg != nullptr; ++arg) {
      ok = core::sys::write_all(fd, *arg, core::string_length(*arg) + 1);
    }
  } else {
    size_t size = 0;
    const char* command = command_line(&size);
    if (ok && size > 0) ok = core::sys::write_all(fd, command, size);
  }
  close(fd);
  return ok;
}

// Writes the marker of `pid` aside (a file only this thread writes), then renames it over any
// other; the file aside is removed if anything fails.
void replace_marker(int pid, int ppid, const char* origin, char* const* argv) {
  MarkerPath path = marker_path(pid);
  MarkerPath aside;
  aside.str(g_flags.result_dir).str("/.memtrack.").i64(core::sys::current_tid()).str(".writing");
  int fd = open(aside.data(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (!write_content_and_close(fd, ppid, origin, argv) || rename(aside.data(), path.data()) != 0) {
    unlink(aside.data());
  }
}

}  // namespace

// A thread's id is unique while it runs, so the file written aside is this writer's alone;
// its name starts with '.', which the CLI never takes for a marker or a result.
void write_start_marker() {
  if (g_flags.result_dir[0] == '\0') return;
  replace_marker(core::sys::current_pid(), getppid(), g_forked_copy ? "forked" : nullptr, nullptr);
}

void note_forked_copy() {
  g_forked_copy = true;
}

// O_EXCL: the parent's hook and the child's fork handler may both write, in either order.
// If the child exec's while the parent writes, the new image's marker is renamed over the
// parent's (whose file the parent then finishes unlinked), or the parent finds it and stops.
void write_forked_start_marker(int pid, int ppid) {
  if (g_flags.result_dir[0] == '\0') return;
  MarkerPath path = marker_path(pid);
  int fd = open(path.data(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;
  write_content_and_close(fd, ppid, "forked");
}

void write_spawned_start_marker(int pid, int ppid, char* const argv[]) {
  if (g_flags.result_dir[0] == '\0' || argv == nullptr) return;
  MarkerPath path = marker_path(pid);
  int fd = open(path.data(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;
  write_content_and_close(fd, ppid, "spawned", argv);
}

void write_exec_start_marker(char* const argv[]) {
  if (g_flags.result_dir[0] == '\0' || argv == nullptr) return;
  replace_marker(core::sys::current_pid(), getppid(), "exec", argv);
}

void undo_exec_start_marker() {
  if (g_flags.result_dir[0] == '\0') return;
  if (core::sys::current_pid() == g_pid.load(std::memory_order_relaxed) && !silenced()) {
    write_start_marker();
  } else {
    unlink(marker_path(core::sys::current_pid()).data());  // a vfork child's, a silent one's
  }
}

}  // namespace memtrack::rt
