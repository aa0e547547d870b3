// Diagnostics on stderr (diag.h). Runtime-safe: no malloc, no libc.
#include "runtime/diag.h"

#include "core/sys_linux.h"
#include "core/text_buffer.h"

namespace memtrack::rt {

void diag(const char* message) {
  core::FixedText<640> line;
  line.str("memtrack[").i64(core::sys::current_pid()).str("]: ").str(message).chr('\n');
  core::sys::write_all(2, line.data(), line.size());
}

void warn_once(std::atomic<bool>& flag, const char* message) {
  if (!flag.exchange(true, std::memory_order_relaxed)) diag(message);
}

}  // namespace memtrack::rt
