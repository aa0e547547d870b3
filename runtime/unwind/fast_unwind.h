// Stack unwinders: the fast one (cached DWARF rules on x86-64 and aarch64, fast_unwind.cpp;
// cached EHABI rules on 32-bit ARM, fast_unwind_arm.cpp) and the reference one (libgcc_s's
// _Unwind_Backtrace). Runtime-safe: neither allocates nor takes a lock, except
// that libgcc may allocate once on its first use.
#pragma once

#include <cstdint>

namespace memtrack::core {
class StackDepot;
}

namespace memtrack::rt {

// Frames whose return address lies in [start, end) are left out of every stack (the
// runtime's own code). Set once before the first unwind; (0, 0) skips nothing.
void set_skipped_code(uintptr_t start, uintptr_t end);
bool in_skipped_code(uintptr_t pc);
// The range set_skipped_code was given.
void skipped_code_range(uintptr_t* /*out*/ start, uintptr_t* /*out*/ end);

// Captures the caller's stack: up to `max` return addresses, innermost first, and their
// StackDepot::hash_frames in *hash. Returns -1 when a frame needs the reference unwinder
// (signal frames, CFA expressions, code outside any loaded module); nothing is stored then.
// Thread safe, async-signal-safe once its cache holds the rules it needs.
int fast_unwind(uintptr_t* frames, int max, uint64_t* /*out*/ hash);

// As fast_unwind, and the stack's id in `depot` in *id. Reuses the stack of this thread's memo
// (stack_memo.h) when every word the earlier walk loaded is unchanged: then neither the walk
// nor the depot lookup runs. Same result as fast_unwind + StackDepot::intern_hashed.
// `frames` may be nullptr when only the id is wanted. `hook_frame`: the frame address
// (__builtin_frame_address(0)) of the hook the program called, or 0: on x86-64 the runtime's
// frames are then left from there in one step instead of walked from the unwinder's own.
int fast_unwind_interned(uintptr_t* frames, int max, core::StackDepot* depot, uint32_t* /*out*/ id,
                         uintptr_t hook_frame = 0);

// This thread's memo counters: stacks reused, lookups whose registers matched but a loaded
// word differed, stacks stored. Zero where there is no memo (32-bit ARM).
struct StackMemoStats {
  uint64_t hits = 0;
  uint64_t rejected = 0;
  uint64_t stored = 0;
};
StackMemoStats stack_memo_stats();
// The same for the whole process: threads that have exited, and the calling thread.
StackMemoStats stack_memo_totals();

// The same stack with _Unwind_Backtrace. Returns the number of frames stored.
int reference_unwind(uintptr_t* frames, int max);

// The frame pointer of the runtime's wrapper around main while main runs (0 otherwise): the
// frames below it are learnt once and reused (see BaseOfMain in the .cpp).
void set_main_wrapper_frame(uintptr_t frame);

// One frame of a thread's stack, for naming the leak scan's roots: the code address it was
// at (a return address for every frame but the first), and its CFA, the top of its part of the
// stack (the caller's stack pointer): the frame's words lie below it, above the previous CFA.
struct FrameSpan {
  uintptr_t pc;
  uintptr_t cfa;
};
// The frames of a stopped thread from its interrupted registers (pc, stack pointer, frame
// pointer), innermost first, reading only inside [sp, stack_end). *complete is set when the
// walk reached the outermost frame. Returns the number stored: 0 where the first frame's rule
// is one the fast unwinder does not model (a leaf on aarch64), or on 32-bit ARM.
int walk_frames_from(uintptr_t pc, uintptr_t sp, uintptr_t bp, uintptr_t stack_end,
                     FrameSpan* frames, int max, bool* /*out*/ complete);
// The same for the calling thread, from its caller's frame.
int walk_own_frames(uintptr_t stack_end, FrameSpan* frames, int max, bool* /*out*/ complete);

// Drops every cached rule (a module was unloaded; a later one may reuse its addresses).
void forget_unwind_rules();

}  // namespace memtrack::rt
