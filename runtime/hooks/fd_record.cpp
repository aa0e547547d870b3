// Recording what the descriptor and stream hooks open and close, with the opening call's
// stack (fd_record.h). Runtime-safe: no malloc.
#include "runtime/hooks/fd_record.h"

#include "core/fd_names.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/hooks/entry.h"
#include "runtime/runtime.h"
#include "runtime/unwind/unwind.h"

namespace memtrack::rt {

void note_open(int fd, core::result::ResourceCall call, uint32_t flags, const char* mode,
               const void* stream, uint32_t stream_size) {
  // The standard streams are never reported, whoever opened them; only a FILE object there
  // is worth an entry (a root of the leak scan).
  if (fd < 0 || (fd < 3 && stream_size == 0)) return;
  RuntimeScope scope;
  ErrnoKeeper keep;
  FdInfo info;
  info.call = call;
  info.flags = core::open_flags::from_native(flags);
  if (mode != nullptr) core::copy_stream_mode(mode, info.mode, sizeof(info.mode));
  info.stream_object = reinterpret_cast<uintptr_t>(stream);
  info.stream_size = stream != nullptr ? stream_size : 0;
  uintptr_t frames[core::kMaxFramesLimit];
  uint64_t hash = 0;
  int depth = capture_stack(frames, g_flags.max_frames, &hash);
  info.stack_id = g_stacks.intern_hashed(frames, static_cast<uint32_t>(depth), hash);
  g_fds.record(fd, info);  // beyond the table: counted as untracked, the report says so
}

bool forget_fd(int fd, FdInfo* saved) {
  RuntimeScope scope;  // a signal handler closing the same fd must not wait for our lock
  return g_fds.erase(fd, saved);
}

void restore_fd(int fd, const FdInfo& saved) {
  RuntimeScope scope;
  g_fds.restore(fd, saved);
}

}  // namespace memtrack::rt
