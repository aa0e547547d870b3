// Clears what the recording of a new block leaves below the stack pointer when the program
// runs on a stack of its own making (a coroutine's, from malloc or mmap). The leak scan reads
// such a stack whole, the dead part below its saved stack pointer included, where memcheck
// sees only undefined words; a copy of the new block's address left there by the runtime's
// frames would keep the block alive after the program dropped it. On the thread's own stack
// the scan starts at the stack pointer, so nothing is cleared there.
// Runtime-safe: no malloc, except once per thread (learning its stack, below).
#pragma once

#include <cstdint>

#include "runtime/thread_state.h"

namespace memtrack::rt {

// Learns the calling thread's own stack (pthread_getattr_np, which allocates: called inside
// the runtime scope) into t_thread.
void learn_thread_stack();
// Zeroes the stack just below the caller's frame, as deep as the recording path reaches.
void scrub_below_caller();

// Called by an allocation hook after it recorded a block, from the hook's own frame. One
// subtraction and compare on the thread's own stack.
inline void scrub_if_foreign_stack() {
  auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (__builtin_expect(t_thread.stack_size == 0, 0)) learn_thread_stack();
  if (__builtin_expect(sp - t_thread.stack_low >= t_thread.stack_size, 0)) scrub_below_caller();
}

}  // namespace memtrack::rt
