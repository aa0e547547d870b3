// The heap check's guard pages in the runtime (heap_check.h). Calls libc (mprotect through
// sys_linux, the unwinder) but never malloc.
#include "runtime/record/heap_check.h"

#include <signal.h>
#include <string.h>
#include <ucontext.h>

#include "core/result_records.h"
#include "core/sampling.h"
#include "core/sys_linux.h"
#include "runtime/diag.h"
#include "runtime/leakcheck/guarded_read.h"
#include "runtime/machine_context.h"
#include "runtime/record/crash.h"
#include "runtime/record/misuse.h"
#include "runtime/unwind/unwind.h"

namespace memtrack::rt {

HeapCheck g_heap_check;
core::GuardPool g_guard_pool;

namespace {

using core::result::ErrorKind;
using Slot = core::GuardPool::Slot;
using SlotState = core::GuardPool::SlotState;

core::GuardSide side_from(const char* name) {
  if (strcmp(name, "end") == 0) return core::GuardSide::kEnd;
  if (strcmp(name, "start") == 0) return core::GuardSide::kStart;
  if (strcmp(name, "random") != 0) {
    diag("warning: check_heap_side is end, start or random; using random");
  }
  return core::GuardSide::kRandom;
}

uint32_t current_stack() {
  uintptr_t frames[core::kMaxFramesLimit];
  uint64_t hash = 0;
  int max = g_flags.max_frames < core::kMaxFramesLimit ? g_flags.max_frames : core::kMaxFramesLimit;
  int depth = capture_stack(frames, max, &hash);
  return g_stacks.intern_hashed(frames, static_cast<uint32_t>(depth), hash);
}

ErrorEntry error_about(const Slot& s, ErrorKind kind, uintptr_t address, uint32_t bad_stack) {
  ErrorEntry e{};
  e.kind = kind;
  e.where = core::result::ErrorWhere::kHeap;
  e.alloc_call = core::result::AllocCall::kNone;
  e.occurrences = 1;
  e.bad_stack = bad_stack;
  e.alloc_stack = s.alloc_stack;
  e.address = address;
  e.block_start = s.start;
  e.block_size = s.size;
  return e;
}

// first_changed_byte of a live block, under the caller's ScanGuard: false if its page became
// inaccessible meanwhile (another thread freed the block while a live report checked it).
__attribute__((noinline)) bool read_changed_byte(const Slot& s, uintptr_t* changed) {
  sigjmp_buf jump;
  sigjmp_buf* outer = t_thread.fault_jump;
  if (sigsetjmp(jump, 0) != 0) {
    t_thread.fault_jump = outer;
    return false;
  }
  t_thread.fault_jump = &jump;
  *changed = g_guard_pool.first_changed_byte(s);
  t_thread.fault_jump = outer;
  return true;
}

}  // namespace

void init_heap_check() {
  if (g_flags.check_heap_sample <= 0) return;
  if (kAttachRuntime) {
    // Blocks of the pool must not outlive the detach: the program's own free would get them.
    diag("warning: check_heap_sample is not available in an attached process; ignored");
    return;
  }
  uint64_t seed = static_cast<uint64_t>(g_flags.sample_seed);
  if (seed == 0) {
    uint64_t state = core::sys::monotonic_ns() ^
                     (uint64_t{static_cast<uint32_t>(core::sys::current_pid())} << 32);
    seed = core::split_mix64(state) | 1;
  }
  if (!g_guard_pool.init(static_cast<size_t>(g_flags.check_heap_slots), core::sys::page_size(),
                         side_from(g_flags.check_heap_side), seed)) {
    diag(
        "warning: check_heap_sample: the guard pool could not be mapped (address space or "
        "memory); heap memory errors are not checked");
    return;
  }
  g_heap_check.seed = seed;
  g_heap_check.continue_after = g_flags.check_heap_continue;
  g_heap_check.interval = static_cast<uint64_t>(g_flags.check_heap_sample);
}

void* try_guarded_allocate(size_t size, size_t alignment) {
  if (!guard_due()) return nullptr;
  t_thread.guard_due = false;
  if (size > g_guard_pool.page_size()) return nullptr;
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  uintptr_t p =
      g_guard_pool.allocate(size, alignment, 0, static_cast<uint32_t>(core::sys::current_tid()));
  core::sys::set_errno(saved_errno);
  return reinterpret_cast<void*>(p);
}

void free_guarded(void* ptr) {
  int saved_errno = core::sys::get_errno();
  // The stack of a use after free's free: worth an unwind at one free in N.
  uint32_t stack = in_runtime() ? 0 : current_stack();
  RuntimeScope scope;
  uintptr_t changed = 0;
  const Slot* s = nullptr;
  auto address = reinterpret_cast<uintptr_t>(ptr);
  if (g_guard_pool.free(address, stack, static_cast<uint32_t>(core::sys::current_tid()), &changed,
                        &s) == core::GuardPool::FreeResult::kFreed &&
      changed != 0 && (stack != 0 || s->alloc_stack != 0)) {
    record_heap_error(error_about(*s, ErrorKind::kWriteOutsideBlock, changed,
                                  stack != 0 ? stack : s->alloc_stack));
  }
  core::sys::set_errno(saved_errno);
}

size_t guarded_usable_size(const void* ptr) {
  const Slot* s = g_guard_pool.live_block(reinterpret_cast<uintptr_t>(ptr));
  return s != nullptr ? s->size : 0;
}

GuardFault report_guard_fault(const void* info_ptr, const void* context) {
  const auto* info = static_cast<const siginfo_t*>(info_ptr);
  if (g_heap_check.interval == 0 || info == nullptr || info->si_signo != SIGSEGV ||
      info->si_code <= 0) {
    return GuardFault::kNotOurs;
  }
  auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  if (!g_guard_pool.owns(address)) return GuardFault::kNotOurs;
  core::GuardPool::Culprit c = g_guard_pool.locate(address);
  const auto* uc = static_cast<const ucontext_t*>(context);
  bool write = false;
  bool known = context_fault_was_write(uc, &write);
  // A fault inside the runtime would be memtrack's own bug (its reads of blocks cannot
  // fault: guarded_read.h): no report then, the crash handler decides.
  if (!in_runtime()) {
    uint32_t stack = capture_signal_stack(context);
    ErrorEntry e{};
    if (c.slot != nullptr) {
      e = error_about(*c.slot, known && !write ? ErrorKind::kInvalidRead : ErrorKind::kInvalidWrite,
                      address, stack);
      bool freed = c.slot->state.load(std::memory_order_acquire) == SlotState::kFreed;
      e.detail = freed ? 1 : 0;
      if (freed) e.free_stack = c.slot->free_stack;
    } else {
      e.kind = known && !write ? ErrorKind::kInvalidRead : ErrorKind::kInvalidWrite;
      e.where = core::result::ErrorWhere::kUnknown;
      e.alloc_call = core::result::AllocCall::kNone;
      e.occurrences = 1;
      e.bad_stack = stack;
      e.address = address;
    }
    record_heap_error(e);
  }
  if (g_heap_check.continue_after && g_guard_pool.open_page_of(address)) {
    return GuardFault::kContinued;
  }
  return GuardFault::kReported;
}

void check_guarded_blocks() {
  if (g_heap_check.interval == 0) return;
  RuntimeScope scope;
  ScanGuard guard;
  for (size_t i = 0; i < g_guard_pool.slot_count(); ++i) {
    Slot& s = g_guard_pool.slot(i);
    if (s.edge_reported || s.state.load(std::memory_order_acquire) != SlotState::kLive ||
        s.retired.load(std::memory_order_relaxed) || s.alloc_stack == 0) {
      continue;
    }
    uintptr_t changed = 0;
    if (!read_changed_byte(s, &changed) || changed == 0) continue;
    s.edge_reported = true;
    ErrorEntry e = error_about(s, ErrorKind::kWriteOutsideBlock, changed, s.alloc_stack);
    e.detail = 1;  // found at exit: no stack of its own
    record_heap_error(e);
  }
}

}  // namespace memtrack::rt
