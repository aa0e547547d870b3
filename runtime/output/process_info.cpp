// Process facts for the result file: command line, executable, and how the program ended
// (the hooks that learn it are in hooks/process_hooks.cpp).
// Calls libc (open, read, readlink) but never malloc.
#include "runtime/output/process_info.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/output/preload_list.h"
#include "runtime/runtime.h"
#include "runtime/unwind/fast_unwind.h"

extern char** environ;

namespace memtrack::rt {
namespace {

constexpr size_t kMaxCommandLine = 8192;
char g_command_line[kMaxCommandLine];
size_t g_command_line_size = 0;
char g_executable[4096];
ExitRecord g_exit;

MainFn g_real_main = nullptr;

bool has_prefix(const char* s, const char* prefix) {
  while (*prefix != '\0') {
    if (*s++ != *prefix++) return false;
  }
  return true;
}

// Rewrites a ':'/' '-separated library list in place without the entries naming
// libmemtrack.so. The result is never longer than the input, so it fits where it is.
void remove_self_from_list(char* list) {
  char* out = list;
  for_each_preload_entry(list, [&](const char* start, size_t len, bool is_self) {
    if (is_self) return;
    if (out != list) *out++ = ':';
    for (size_t i = 0; i < len; ++i) out[i] = start[i];  // out <= start: a safe left move
    out += len;
  });
  *out = '\0';
}

uintptr_t g_exit_frame = 0;
int g_exit_tid = 0;

int main_wrapper(int argc, char** argv, char** envp) {
  // The unwinder recognises this frame by its frame pointer (the runtime keeps them): what
  // lies below it is the same for every stack of the main thread while main runs.
  set_main_wrapper_frame(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  int status = g_real_main(argc, argv, envp);
  set_main_wrapper_frame(0);
  note_exit_stack(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  set_exit_record(core::result::ExitHow::kExit, status);
  return status;
}

}  // namespace

MainFn wrap_main(MainFn main) {
  g_real_main = main;
  return main_wrapper;
}

void capture_process_info() {
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, g_command_line, kMaxCommandLine);
    g_command_line_size = n > 0 ? static_cast<size_t>(n) : 0;
    close(fd);
  }
  ssize_t n = readlink("/proc/self/exe", g_executable, sizeof(g_executable) - 1);
  g_executable[n > 0 ? n : 0] = '\0';
}

const char* command_line(size_t* size) {
  *size = g_command_line_size;
  return g_command_line;
}

const char* executable_path() {
  return g_executable;
}

ExitRecord exit_record() {
  return g_exit;
}

void note_exit_stack(uintptr_t frame) {
  if (g_exit_frame != 0) return;  // the first exit path wins, as for the exit record
  g_exit_tid = core::sys::current_tid();
  g_exit_frame = frame;
}

uintptr_t exit_stack(int tid) {
  return tid == g_exit_tid ? g_exit_frame : 0;
}

void set_exit_record(core::result::ExitHow how, int status) {
  // The first word wins: exit() called from main's caller after main returned, or _exit
  // called by an atexit handler, must not overwrite what ended the program.
  if (g_exit.how != core::result::ExitHow::kUnknown) return;
  g_exit.how = how;
  g_exit.status = status & 0xff;
}

void stop_following_exec() {
  static const char kName[] = "LD_PRELOAD=";
  for (char** env = environ; env != nullptr && *env != nullptr; ++env) {
    if (has_prefix(*env, kName)) remove_self_from_list(*env + sizeof(kName) - 1);
  }
}

}  // namespace memtrack::rt
