// The entry check of the hooks (entry.h). Runtime-safe: no malloc.
#include "runtime/hooks/entry.h"

#include <errno.h>

#include "runtime/hooks/init.h"
#include "runtime/link/real_functions.h"
#include "runtime/runtime.h"
#include "runtime/unwind/unwind.h"

namespace memtrack::rt {

Entry enter() {
  if (in_runtime()) return g_real.malloc == nullptr ? Entry::kBootstrap : Entry::kRuntime;
  if (!initialized() && !ensure_initialized()) return Entry::kBootstrap;
  return Entry::kProgram;
}

bool fd_tracking(uintptr_t caller) {
  // The runtime's own files (the result file, /proc/self/maps, ELF files) are opened inside
  // its scope; the address check also covers runtime code that forgot the scope.
  if (in_runtime() || is_runtime_address(caller)) return false;
  if (!initialized()) {
    ErrnoKeeper keep;
    if (!ensure_initialized()) return false;  // dlsym re-entered us during start-up
  }
  return g_flags.track_fds;
}

ErrnoKeeper::ErrnoKeeper() : saved_(errno) {}
ErrnoKeeper::~ErrnoKeeper() {
  errno = saved_;
}

}  // namespace memtrack::rt
