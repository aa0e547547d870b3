// File descriptor and FILE stream tracking inside the runtime (track_fds option): the table
// of descriptors the program opened and the scope that keeps stdio's own allocations out of
// the allocation table. The hooks are in fd_hooks_libcdep.cpp, the report side in
// fd_report.h. Runtime-safe: nothing here allocates.
#pragma once

#include "runtime/fd_table.h"

namespace memtrack::rt {

// Every descriptor the program opened through the hooks and has not closed (fds 0, 1 and 2
// are never recorded: they are the standard streams whoever opened them).
extern FdTable g_fds;

// Set while the real fopen, fdopen, freopen or fclose runs on behalf of the program with
// track_fds on. The allocations glibc makes meanwhile (the FILE object) are not recorded,
// so a FILE the program never closes is reported once, as a descriptor, and not also as a
// 472-byte leak. Frees still take the normal path, so fclose releases the record of the
// stdio buffer (allocated on first use, outside the scope) as free would; only a pointer the
// table does not know is passed on without a misuse verdict, because fclose frees the FILE
// object, which was never recorded and may sit at the address of an earlier, quarantined
// block. (RuntimeScope would do neither: it skips the table on free too.)
extern __thread int t_stdio_scope;

class StdioScope {
 public:
  explicit StdioScope(bool active) : active_(active) {
    if (active_) ++t_stdio_scope;
  }
  ~StdioScope() {
    if (active_) --t_stdio_scope;
  }
  StdioScope(const StdioScope&) = delete;
  StdioScope& operator=(const StdioScope&) = delete;

 private:
  bool active_;
};

inline bool in_stdio_scope() {
  return t_stdio_scope != 0;
}

}  // namespace memtrack::rt
