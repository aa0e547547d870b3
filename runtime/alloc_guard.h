// A debug check of the runtime's main rule, that it never allocates through malloc for
// itself. In a build with MEMTRACK_ALLOC_GUARD (cmake -DMEMTRACK_ALLOC_GUARD=ON) an allocation
// call made while the calling thread is inside the runtime scope aborts with its stack,
// unless an AllowAllocation scope says why it is deliberate (docs/runtime.md, "Allocations of
// its own", lists them). In other builds both compile to nothing. Runtime-safe: no malloc.
#pragma once

#include "runtime/thread_state.h"

namespace memtrack::rt {

// Marks a call that allocates on purpose while the thread is inside the runtime (dlsym,
// libgcc's first unwind, ...). `why` names it for the reader; nesting is allowed. One per
// scope, on the thread that allocates. Counted in every build: an allocation inside the
// runtime outside such a scope is a signal handler's (record/forwarded.h).
class AllowAllocation {
 public:
  explicit AllowAllocation(const char* /*why*/) { ++t_thread.allowed_allocations; }
  ~AllowAllocation() { --t_thread.allowed_allocations; }
  AllowAllocation(const AllowAllocation&) = delete;
  AllowAllocation& operator=(const AllowAllocation&) = delete;
};

#ifdef MEMTRACK_ALLOC_GUARD
// Writes "alloc guard: <call> inside the runtime" with the calling thread's stack to stderr
// and aborts (the report-on-signal handler is taken out first). Called by check_allocation.
[[noreturn]] void fail_own_allocation(const char* call);
#endif

// Called by every allocation hook (`call` is its name) before it forwards to the real
// allocator. Thread safe.
inline void check_allocation(const char* call) {
#ifdef MEMTRACK_ALLOC_GUARD
  if (t_thread.in_runtime != 0 && t_thread.allowed_allocations == 0) fail_own_allocation(call);
#else
  (void)call;
#endif
}

}  // namespace memtrack::rt
