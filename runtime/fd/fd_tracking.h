// File descriptor and FILE stream tracking inside the runtime (track_fds option): the table
// of descriptors the program opened and the scope that keeps stdio's own allocations out of
// the allocation table. The hooks are in fd_hooks.cpp, the report side in
// fd_report.h. Runtime-safe: nothing here allocates.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/fd/fd_table.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

// Every descriptor the program opened through the hooks and has not closed. fds 0, 1 and 2
// are recorded only for a stream (their FILE object is a root, see below) and never reported:
// they are the standard streams, whoever opened them.
extern FdTable g_fds;

// Set while the real fopen, fdopen, freopen or fclose runs on behalf of the program with
// track_fds on. The allocations glibc makes meanwhile (the FILE object) are not recorded, so
// a FILE the program never closes is reported once, as a descriptor, and never as memory.
// Frees still take the normal path, so fclose releases the record of the stdio buffer
// (allocated on first use, outside the scope) as free would; only a pointer the table does
// not know is passed on without a misuse verdict: fclose frees the FILE object, which was
// never recorded and may sit at the address of an earlier, quarantined block. (RuntimeScope
// would do neither: it skips the table on free too.)
//
// An open FILE object is still a root of the leak scan (glibc's list of open streams points
// to it, so memcheck finds everything it points to: the stdio buffers, a setvbuf buffer):
// the scope remembers the first block allocated in it, which is the FILE object fopen and
// fdopen return, and the fd table keeps its range with the stream's entry.

class StdioScope {
 public:
  explicit StdioScope(bool active) : active_(active) {
    if (!active_) return;
    if (t_thread.stdio_scope++ == 0) t_thread.stdio_first_block = 0;
  }
  ~StdioScope() {
    if (active_) --t_thread.stdio_scope;
  }
  StdioScope(const StdioScope&) = delete;
  StdioScope& operator=(const StdioScope&) = delete;

 private:
  bool active_;
};

inline bool in_stdio_scope() {
  return t_thread.stdio_scope != 0;
}

// Called by the allocation hooks for a block made inside a StdioScope (and not recorded).
inline void note_stdio_block(const void* ptr, size_t size) {
  if (t_thread.stdio_first_block != 0 || ptr == nullptr) return;
  t_thread.stdio_first_block = reinterpret_cast<uintptr_t>(ptr);
  t_thread.stdio_first_size = size > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(size);
}

// Calls fn(begin, end) for the FILE object of each tracked stream: the leak scan's extra
// roots. Takes the entries' locks one at a time.
template <typename Fn>
void for_each_open_stream(Fn&& fn) {
  g_fds.for_each([&](int, const FdInfo& info) {
    if (info.stream() && info.stream_size > 0) {
      fn(info.stream_object, info.stream_object + info.stream_size);
    }
  });
}

}  // namespace memtrack::rt
