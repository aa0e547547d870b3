// Stack capture for the allocation hooks: the fast unwinder (fast_unwind.cpp), or
// libgcc's where it cannot follow a frame or fast_unwind=0; check_unwinder compares the two.
// The runtime's own frames are never reported: the hooks at the top, and main_wrapper (see
// process_info.cpp) below the program's main.
// Runtime-safe: no malloc, no runtime lock.
#include "runtime/unwind/unwind.h"

#include <dlfcn.h>

#include "core/stack_depot.h"
#include "core/text_buffer.h"
#include "runtime/alloc_guard.h"
#include "runtime/diag.h"
#include "runtime/runtime.h"
#include "runtime/unwind/fast_unwind.h"

namespace memtrack::rt {
namespace {

// How stacks were captured (the fallback count always; the rest with check_unwinder).
std::atomic<uint64_t> g_fallback_stacks{0};
std::atomic<uint64_t> g_checked_stacks{0};
std::atomic<uint64_t> g_mismatched_stacks{0};

void check_against_reference(const uintptr_t* frames, int depth, int max) {
  uintptr_t reference[core::kMaxFramesLimit];
  int reference_depth = reference_unwind(reference, max);
  g_checked_stacks.fetch_add(1, std::memory_order_relaxed);
  bool same = reference_depth == depth;
  for (int i = 0; same && i < depth; ++i) same = reference[i] == frames[i];
  if (same) return;
  uint64_t mismatches = g_mismatched_stacks.fetch_add(1, std::memory_order_relaxed);
  if (mismatches >= 5) return;
  // The first few differences in full, so a failing check can be debugged from its log.
  core::FixedText<4096> text;
  text.str("unwinder check: stacks differ; fast:");
  for (int i = 0; i < depth; ++i) text.str(" ").hex(frames[i]);
  text.str("; libgcc:");
  for (int i = 0; i < reference_depth; ++i) text.str(" ").hex(reference[i]);
  diag(text.data());
}

}  // namespace

bool is_runtime_address(uintptr_t pc) {
  return in_skipped_code(pc);
}

void init_unwinder() {
  dl_find_object self{};
  if (_dl_find_object(reinterpret_cast<void*>(&init_unwinder), &self) == 0) {
    set_skipped_code(reinterpret_cast<uintptr_t>(self.dlfo_map_start),
                     reinterpret_cast<uintptr_t>(self.dlfo_map_end));
  }
  uintptr_t warm_up[4];
  uint64_t hash = 0;
  {
    AllowAllocation allowed("libgcc's first unwind");
    reference_unwind(warm_up, 4);  // libgcc's first use may allocate
  }
  capture_stack(warm_up, 4, &hash);
}

int capture_stack(uintptr_t* frames, int max, uint64_t* /*out*/ hash) {
  int depth = -1;
  if (g_flags.fast_unwind) {
    depth = fast_unwind(frames, max, hash);
    if (depth >= 0 && g_flags.check_unwinder) check_against_reference(frames, depth, max);
    if (depth >= 0) return depth;
    g_fallback_stacks.fetch_add(1, std::memory_order_relaxed);
  }
  depth = reference_unwind(frames, max);
  *hash = core::StackDepot::hash_frames(frames, static_cast<uint32_t>(depth));
  return depth;
}

uint32_t capture_stack_id(uintptr_t* frames, int max, int* /*out*/ depth, uintptr_t hook_frame) {
  uint32_t id = core::StackDepot::kInvalidId;
  uintptr_t own[core::kMaxFramesLimit];
  // The cross-check compares the frames; the fast unwinder needs none copied otherwise.
  if (frames == nullptr && g_flags.check_unwinder) frames = own;
  if (g_flags.fast_unwind) {
    *depth = fast_unwind_interned(frames, max, &g_stacks, &id, hook_frame);
    // Memo hits too: the cross-check compares every stack the hooks record.
    if (*depth >= 0 && g_flags.check_unwinder) check_against_reference(frames, *depth, max);
    if (*depth >= 0) return id;
    g_fallback_stacks.fetch_add(1, std::memory_order_relaxed);
  }
  if (frames == nullptr) frames = own;
  *depth = reference_unwind(frames, max);
  uint64_t hash = core::StackDepot::hash_frames(frames, static_cast<uint32_t>(*depth));
  return g_stacks.intern_hashed(frames, static_cast<uint32_t>(*depth), hash);
}

uint32_t capture_current_stack() {
  int depth = 0;
  return capture_stack_id(nullptr, g_flags.max_frames, &depth);
}

void report_unwinder_check() {
  if (!g_flags.check_unwinder) return;
  // Reused stacks of the threads that have exited and of this one (not of other threads
  // still running).
  StackMemoStats memo = stack_memo_totals();
  core::FixedText<256> text;
  text.str("unwinder check: ")
      .u64(g_checked_stacks.load(std::memory_order_relaxed))
      .str(" fast stacks compared with libgcc, ")
      .u64(g_mismatched_stacks.load(std::memory_order_relaxed))
      .str(" differed; ")
      .u64(g_fallback_stacks.load(std::memory_order_relaxed))
      .str(" stacks went to libgcc; ")
      .u64(memo.hits)
      .str(" reused from the memo");
  diag(text.data());
}

}  // namespace memtrack::rt
