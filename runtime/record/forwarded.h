// The blocks the real allocator handed out for allocation calls made while the thread was
// inside the runtime scope but not on the runtime's behalf: a signal handler of the program
// that interrupted the runtime (its calls go to the real allocator, untouched, so that they
// never wait for a lock the interrupted code holds). The program frees such a block later,
// outside the runtime, and its free must not be judged an invalid one (misuse.h): it is a
// real block memtrack did not record. The runtime's own deliberate allocations are made
// inside an AllowAllocation scope (alloc_guard.h) and are not kept here.
// Best effort: a fixed set of addresses (lock-free, async-signal-safe); a block that finds no
// room is not kept, and its later free is judged as before.
// Runtime-safe: no malloc.
#pragma once

#include <cstddef>

namespace memtrack::rt {

// Called by the hooks for a block allocated inside the runtime scope (any thread, any
// context): keeps it unless the allocation was the runtime's own (AllowAllocation).
void note_forwarded(const void* ptr);
// Removes `ptr` if it is kept; true if it was.
bool forget_forwarded(const void* ptr);

}  // namespace memtrack::rt
