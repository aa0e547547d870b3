// Stack capture for the hooks. Runtime-safe: no malloc, no runtime lock.
#pragma once

#include <cstdint>

namespace memtrack::rt {

// Captures the calling thread's stack, without the runtime's own frames, into `frames`.
// Returns the number of frames stored (at most `max`) and sets *hash to
// StackDepot::hash_frames of them. Never takes a runtime lock.
int capture_stack(uintptr_t* frames, int max, uint64_t* /*out*/ hash);
// capture_stack and the stack's id in g_stacks: returns the id, *depth the frames stored.
// Reuses this thread's memo of unchanged stacks (stack_memo.h) when it can. `frames` may be
// nullptr when only the id is wanted; `hook_frame` as fast_unwind_interned's.
uint32_t capture_stack_id(uintptr_t* frames, int max, int* /*out*/ depth, uintptr_t hook_frame = 0);
// The id in g_stacks of the calling thread's stack now, max_frames deep: a free's or an
// error's. Through the memo too: a program's frees repeat their stacks as its allocations do.
uint32_t capture_current_stack();
void init_unwinder();
// check_unwinder: prints how many fast stacks differed from libgcc's. Called once at exit.
void report_unwinder_check();
// True if `pc` lies in libmemtrack.so itself.
bool is_runtime_address(uintptr_t pc);

}  // namespace memtrack::rt
