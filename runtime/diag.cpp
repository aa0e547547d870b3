// Diagnostics on stderr (diag.h). Runtime-safe: no malloc, no libc.
#include "runtime/diag.h"

#include "core/sys_linux.h"
#include "core/text_buffer.h"

namespace memtrack::rt {

namespace {
std::atomic<int> g_diag_fd{2};
}  // namespace

void diag(const char* message) {
  core::FixedText<640> line;
  line.str("memtrack[").i64(core::sys::current_pid()).str("]: ").str(message).chr('\n');
  core::sys::write_all(g_diag_fd.load(std::memory_order_relaxed), line.data(), line.size());
}

void set_diag_fd(int fd) {
  g_diag_fd.store(fd < 0 ? 2 : fd, std::memory_order_relaxed);
}

void warn_once(std::atomic<bool>& flag, const char* message) {
  if (!flag.exchange(true, std::memory_order_relaxed)) diag(message);
}

}  // namespace memtrack::rt
