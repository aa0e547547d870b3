// The heap check's guard pages and redzones in the runtime (heap_check.h). Calls libc
// (mprotect through sys_linux, the unwinder) but never malloc.
#include "runtime/record/heap_check.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#include "core/alloc_table.h"
#include "core/heap_check_mode.h"
#include "core/redzone.h"
#include "core/result_records.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/leakcheck/guarded_read.h"
#include "runtime/link/real_functions.h"
#include "runtime/machine_context.h"
#include "runtime/record/crash.h"
#include "runtime/record/misuse.h"
#include "runtime/record/record.h"
#include "runtime/unwind/unwind.h"

namespace memtrack::rt {

HeapCheck g_heap_check;
core::GuardPool g_guard_pool;
core::Quarantine g_quarantine;

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

// A heap memory error about the block at [start, start + size), either mode's.
ErrorEntry heap_error(ErrorKind kind, uintptr_t address, uint32_t bad_stack, uint32_t alloc_stack,
                      uintptr_t start, size_t size) {
  ErrorEntry e{};
  e.kind = kind;
  e.where = core::result::ErrorWhere::kHeap;
  e.alloc_call = core::result::AllocCall::kNone;
  e.occurrences = 1;
  e.bad_stack = bad_stack;
  e.alloc_stack = alloc_stack;
  e.address = address;
  e.block_start = start;
  e.block_size = size;
  return e;
}

ErrorEntry error_about(const Slot& s, ErrorKind kind, uintptr_t address, uint32_t bad_stack) {
  return heap_error(kind, address, bad_stack, s.alloc_stack, s.start, s.size);
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

namespace {

// The blocks check_heap=full gave no redzones (too large for memtrack's heap, or it could not
// serve), for the line at exit.
std::atomic<uint64_t> g_unchecked_blocks{0};
std::atomic<uint64_t> g_unchecked_bytes{0};

// check_heap=sample: the blocks the rate limit passed by (guard_rate_allows), for the line at
// exit, and how many checked blocks a thread may have in a burst above the rate.
std::atomic<uint64_t> g_rate_passed_by{0};
constexpr uint64_t kRateBurst = 16;

// At most this many blocks wait in the quarantine, whatever their bytes (24 bytes of address
// space each, touched as the ring fills).
constexpr size_t kQuarantineCapacity = size_t{1} << 20;

void init_guard_pages(uint32_t interval) {
  uint64_t seed = run_seed();
  if (!g_guard_pool.init(static_cast<size_t>(g_flags.check_heap_slots), core::sys::page_size(),
                         side_from(g_flags.check_heap_side), seed)) {
    diag(
        "warning: check_heap=sample: the guard pool could not be mapped (address space or "
        "memory); heap memory errors are not checked");
    return;
  }
  g_heap_check.seed = seed;
  g_heap_check.continue_after = g_flags.check_heap_continue;
  // sample:1 checks every block, as asked: no limit then.
  if (interval > 1 && g_flags.check_heap_max_per_sec > 0) {
    uint64_t gap = uint64_t{1000000000} / static_cast<uint64_t>(g_flags.check_heap_max_per_sec);
    g_heap_check.rate_gap_ns = gap != 0 ? gap : 1;
  }
  g_heap_check.interval = interval;
}

void init_redzones() {
  if (g_flags.sample_bytes != 0) {
    diag(
        "warning: check_heap=full needs the full mode (sample_bytes=0): the sampled mode's "
        "blocks have no room for redzones; heap memory errors are not checked "
        "(check_heap=sample works with it)");
    return;
  }
  if (!g_allocs.heap().enabled()) {
    diag(
        "warning: check_heap=full: memtrack's heap is off (glibc_malloc, or an address-space "
        "limit such as ulimit -v); heap memory errors are not checked");
    return;
  }
  if (!g_quarantine.init(kQuarantineCapacity, static_cast<size_t>(g_flags.check_heap_quarantine_mb)
                                                  << 20)) {
    diag(
        "warning: check_heap=full: the quarantine could not be mapped (address space); heap "
        "memory errors are not checked");
    return;
  }
  g_allocs.keep_records_in_table();
  g_heap_check.full = true;
}

}  // namespace

void init_heap_check() {
  core::HeapCheckMode mode;
  const char* error = nullptr;
  if (!core::parse_heap_check_mode(g_flags.check_heap, &mode, &error)) {
    core::FixedText<192> line;
    line.str("warning: check_heap ").str(error).str("; heap memory errors are not checked");
    diag(line.data());
    return;
  }
  if (mode.kind == core::HeapCheckMode::Kind::kOff) return;
  if (kAttachRuntime) {
    // Blocks of the pool or with redzones must not outlive the detach: the program's own free
    // would get them.
    diag("warning: check_heap is not available in an attached process; ignored");
    return;
  }
  if (mode.kind == core::HeapCheckMode::Kind::kSample) {
    init_guard_pages(mode.interval);
  } else {
    init_redzones();
  }
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
  uint32_t stack = in_runtime() ? 0 : capture_current_stack();
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

// check_heap=full.

namespace {

core::SmallHeap& heap() {
  return g_allocs.heap();
}

// The blocks with redzones from the real allocator (over 64 KiB with them, or made when
// memtrack's heap could not serve): laid out as the heap's (redzone.h), the header at the
// real block's start. The registry maps each live one to its offset in the real block (the
// record's size field), which the real free needs. Its slots hold addresses / 8 in memtrack's
// own mappings, which no leak scan takes for the program's pointers. All its calls are made in
// the runtime, marked by t_thread.holds_check_heap_lock (holding_check_lock).
core::AllocTable g_large_blocks;

// `fn()` with the thread marked as holding the registry's or the quarantine's lock: a signal
// handler that interrupts it and frees must then take neither (can_take_check_locks).
template <typename Fn>
auto holding_check_lock(Fn&& fn) {
  ThreadState& t = t_thread;
  bool outer = t.holds_check_heap_lock;
  t.holds_check_heap_lock = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  auto result = fn();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t.holds_check_heap_lock = outer;
  return result;
}
bool can_take_check_locks() {
  return !t_thread.holds_check_heap_lock;
}

void count_unchecked(size_t size) {
  g_unchecked_blocks.fetch_add(1, std::memory_order_relaxed);
  g_unchecked_bytes.fetch_add(size, std::memory_order_relaxed);
}

// A block with redzones: its chunk (of memtrack's heap, or the real allocator's block).
struct Redzoned {
  uintptr_t ptr = 0;
  uintptr_t chunk = 0;
  size_t chunk_size = 0;
  bool header_whole = false;  // its header's size fits (an underflow may have overwritten it)
};

void describe(uintptr_t ptr, uintptr_t chunk, size_t chunk_size, Redzoned* out) {
  *out = {ptr, chunk, chunk_size, core::redzone::fits(chunk, chunk_size, ptr)};
}

// A block of memtrack's heap: false if `p` is not inside an allocated chunk.
bool find_in_heap(const void* p, Redzoned* out) {
  auto ptr = reinterpret_cast<uintptr_t>(p);
  size_t chunk_size = 0;
  uintptr_t chunk = heap().allocated_chunk_containing(ptr, &chunk_size);
  if (chunk == 0) return false;
  describe(ptr, chunk, chunk_size, out);
  return true;
}

// A large block from its registry record.
void describe_large(const core::AllocRecord& rec, Redzoned* out) {
  uintptr_t chunk = rec.ptr - rec.size;
  describe(rec.ptr, chunk, g_real.malloc_usable_size(reinterpret_cast<void*>(chunk)), out);
}

// A block of the real allocator with redzones, looked up (or, with `take`, taken out of the
// registry: its free). kUnknown: a signal handler on a thread inside a registry call.
Redzones find_large(const void* p, bool take, Redzoned* out) {
  if (!can_take_check_locks()) return Redzones::kUnknown;
  auto ptr = reinterpret_cast<uintptr_t>(p);
  core::AllocRecord rec;
  RuntimeScope scope;
  bool found = holding_check_lock([&] {
    return take ? g_large_blocks.try_erase(ptr, &rec) : g_large_blocks.try_lookup(ptr, &rec);
  });
  if (!found) return Redzones::kNone;
  describe_large(rec, out);
  return Redzones::kLive;
}

// A block of `size` bytes at `alignment` (0: malloc's; `zeroed`: calloc's, whose fresh pages
// stay untouched) with redzones in a block of the real allocator, or nullptr: the caller then
// takes the real allocator without them. Counted as unchecked only when the registry had no
// room (the real allocator did serve): a size it cannot serve with the redzones it will not
// serve without them either but for the last 48 bytes of the address space.
void* try_large_allocate(size_t size, size_t alignment, bool zeroed) {
  size_t bytes = core::redzone::chunk_bytes(size, alignment);
  if (bytes == 0 || !can_take_check_locks()) return nullptr;
  RuntimeScope scope;
  int saved_errno = core::sys::get_errno();
  void* real = nullptr;
  if (alignment > alignof(max_align_t)) {
    // aligned_alloc wants a multiple of the alignment; the block starts `alignment` into it.
    size_t rounded = (bytes + alignment - 1) & ~(alignment - 1);
    if (rounded >= bytes) real = g_real.aligned_alloc(alignment, rounded);
    if (real != nullptr && zeroed) memset(real, 0, rounded);
  } else {
    real = zeroed ? g_real.calloc(1, bytes) : g_real.malloc(bytes);
  }
  uintptr_t ptr = 0;
  if (real != nullptr) {
    auto chunk = reinterpret_cast<uintptr_t>(real);
    ptr = core::redzone::place(chunk, g_real.malloc_usable_size(real), size, alignment);
    core::AllocRecord rec;
    rec.ptr = ptr;
    rec.size = ptr - chunk;
    if (!holding_check_lock([&] { return g_large_blocks.try_insert(rec); })) {
      g_real.free(real);
      ptr = 0;
      count_unchecked(size);
    }
  }
  core::sys::set_errno(saved_errno);
  return reinterpret_cast<void*>(ptr);
}

ErrorEntry redzone_error(const Redzoned& b, ErrorKind kind, uintptr_t address, uint32_t bad_stack,
                         uint8_t detail) {
  const core::redzone::Header& h = *core::redzone::header(b.chunk);
  ErrorEntry e =
      heap_error(kind, address, bad_stack, h.alloc_stack, b.ptr, b.header_whole ? h.size : 0);
  e.free_stack = kind == ErrorKind::kWriteAfterFree ? h.free_stack : 0;
  e.detail = detail;
  return e;
}

// The changed edge byte nearest the block, or 0. A header an underflow overwrote is itself
// the changed byte nearest the block that can still be named.
uintptr_t changed_edge(const Redzoned& b) {
  return b.header_whole ? core::redzone::first_changed_edge(b.chunk, b.chunk_size, b.ptr) : b.chunk;
}

// The edges of a block, at its free (detail 0).
void check_edges(const Redzoned& b, uint32_t bad_stack, uint8_t detail) {
  uintptr_t changed = changed_edge(b);
  if (changed == 0 || bad_stack == 0) return;
  record_heap_error(redzone_error(b, ErrorKind::kWriteOutsideBlock, changed, bad_stack, detail));
}

// A block leaving the quarantine (or checked there at exit, detail 1): bytes that lost the
// freed pattern were written after the free.
void check_freed(const core::Quarantine::Entry& q, uint8_t detail) {
  Redzoned b;
  describe(q.ptr, q.chunk, q.bytes, &b);
  if (!b.header_whole) return;  // overwritten since: its size and stacks are lost
  const core::redzone::Header& h = *core::redzone::header(q.chunk);
  uintptr_t changed = core::redzone::first_changed_freed(q.ptr, h.size);
  if (changed == 0 || h.free_stack == 0) return;
  record_heap_error(redzone_error(b, ErrorKind::kWriteAfterFree, changed, h.free_stack, detail));
}

void give_back(uintptr_t chunk, bool nested) {
  if (!heap().owns(reinterpret_cast<const void*>(chunk))) {
    g_real.free(reinterpret_cast<void*>(chunk));  // a large block's
  } else if (nested) {
    // A signal handler that interrupted this thread's heap calls (free_block).
    heap().try_deallocate_remote(reinterpret_cast<void*>(chunk));
  } else {
    heap().try_deallocate(reinterpret_cast<void*>(chunk), thread_heap());
  }
}

// A freed block with redzones: its edges checked, then filled with the freed pattern and put
// in the quarantine, where it waits until later frees push it out. Given back at once when it
// cannot be checked later (no size to fill, no stack to report with, a handler on a thread
// holding the quarantine's lock) or it is a large block larger than the quarantine's budget
// (filling it would touch all its pages, and it would push out everything else).
void retire(const Redzoned& b, uint32_t stack, bool nested) {
  core::redzone::Header& h = *core::redzone::header(b.chunk);
  check_edges(b, stack != 0 ? stack : h.alloc_stack, 0);
  if (!b.header_whole || stack == 0 || (nested && !can_take_check_locks()) ||
      (b.chunk_size > core::SmallHeap::kMaxSize && b.chunk_size > g_quarantine.budget())) {
    give_back(b.chunk, nested);
    return;
  }
  h.free_stack = stack;
  core::redzone::fill_freed(b.ptr, h.size);
  core::Quarantine::Entry entry{b.ptr, b.chunk, b.chunk_size};
  // One block in usually leaves one out; a larger one may push out a few smaller ones.
  constexpr size_t kMaxLeaving = 8;
  core::Quarantine::Entry leaving[kMaxLeaving];
  bool pushed = false;
  size_t left = holding_check_lock(
      [&] { return g_quarantine.push_taking_over(entry, leaving, kMaxLeaving, &pushed); });
  for (size_t i = 0; i < left; ++i) {
    check_freed(leaving[i], 0);
    give_back(leaving[i].chunk, nested);
  }
  if (!pushed) {
    check_freed(entry, 0);
    give_back(entry.chunk, nested);
  }
}

}  // namespace

void* try_redzoned_allocate(size_t size, size_t alignment) {
  size_t bytes = core::redzone::chunk_bytes(size, alignment);
  void* chunk = nullptr;
  if (bytes != 0 && bytes <= core::SmallHeap::kMaxSize &&
      alignment <= core::SmallHeap::kMaxAlignment && heap().enabled()) {
    RuntimeScope scope;
    chunk = heap().try_allocate(bytes, alignment, thread_heap());
  }
  if (chunk != nullptr) {
    auto c = reinterpret_cast<uintptr_t>(chunk);
    return reinterpret_cast<void*>(
        core::redzone::place(c, heap().usable_size(chunk), size, alignment));
  }
  return try_large_allocate(size, alignment, false);
}

void* try_redzoned_allocate_zeroed(size_t size) {
  if (core::redzone::chunk_bytes(size, 0) <= core::SmallHeap::kMaxSize) {
    void* p = try_redzoned_allocate(size, 0);
    if (p != nullptr) memset(p, 0, size);
    return p;
  }
  return try_large_allocate(size, 0, true);
}

bool free_redzoned(void* ptr) {
  int saved_errno = core::sys::get_errno();
  bool nested = in_runtime();
  Redzoned b;
  bool in_heap = heap().owns(ptr);
  if (in_heap) {
    if (!find_in_heap(ptr, &b)) {
      core::sys::set_errno(saved_errno);
      return true;  // no block of the heap (release_block let it through): nothing to free
    }
  } else {
    Redzones found = find_large(ptr, true, &b);
    if (found != Redzones::kLive) {
      core::sys::set_errno(saved_errno);
      // Unknown: kept, never given to the real free as its own (lost, not corrupted).
      return found == Redzones::kUnknown;
    }
  }
  // The free's stack: where a write after it, found later, is reported.
  uint32_t stack = nested ? 0 : capture_current_stack();
  {
    RuntimeScope scope;
    retire(b, stack, nested);
  }
  core::sys::set_errno(saved_errno);
  return true;
}

Redzones redzoned_block(const void* ptr, size_t* size) {
  Redzoned b;
  if (heap().owns(ptr)) {
    if (!find_in_heap(ptr, &b) || !b.header_whole) return Redzones::kNone;
  } else {
    Redzones found = find_large(ptr, false, &b);
    if (found != Redzones::kLive) return found;
    if (!b.header_whole) return Redzones::kNone;
  }
  *size = core::redzone::header(b.chunk)->size;
  return Redzones::kLive;
}

void note_redzoned_stack(uintptr_t ptr, uint32_t stack_id) {
  Redzoned b;
  const void* p = reinterpret_cast<const void*>(ptr);
  bool found = heap().owns(p) ? find_in_heap(p, &b) : find_large(p, false, &b) == Redzones::kLive;
  if (found && b.header_whole) core::redzone::header(b.chunk)->alloc_stack = stack_id;
}

void large_blocks_lock_all() {
  g_large_blocks.lock_all();
}
void large_blocks_unlock_all() {
  g_large_blocks.unlock_all();
}
void large_blocks_reset_after_fork() {
  g_large_blocks.reset_after_fork();
}

namespace {

// The exit's check of a live block's edges (detail 1: found at exit, the allocation's stack
// shown), into `found` if there is room.
template <size_t N>
void check_live(const Redzoned& b, ErrorEntry (&found)[N], size_t* count) {
  const core::redzone::Header& h = *core::redzone::header(b.chunk);
  uintptr_t changed = changed_edge(b);
  if (*count < N && changed != 0 && h.alloc_stack != 0) {
    found[(*count)++] = redzone_error(b, ErrorKind::kWriteOutsideBlock, changed, h.alloc_stack, 1);
  }
}

void check_redzoned_blocks() {
  // Live blocks: the heap's records are in the table (keep_records_in_table), the large ones
  // in their registry. Checked after each walk, which holds a shard lock that
  // record_heap_error must not wait under.
  constexpr size_t kBatch = 64;
  ErrorEntry found[kBatch];
  size_t count = 0;
  g_allocs.table().for_each([&](const core::AllocRecord& rec) {
    Redzoned b;
    const auto* p = reinterpret_cast<const void*>(rec.ptr);
    if (heap().owns(p) && find_in_heap(p, &b)) check_live(b, found, &count);
  });
  for (size_t i = 0; i < count; ++i) record_heap_error(found[i]);
  count = 0;
  holding_check_lock([&] {
    g_large_blocks.for_each([&](const core::AllocRecord& rec) {
      Redzoned b;
      describe_large(rec, &b);
      check_live(b, found, &count);
    });
    return true;
  });
  for (size_t i = 0; i < count; ++i) record_heap_error(found[i]);
  // Quarantined blocks: each once, then given back (the program is ending).
  core::Quarantine::Entry entry;
  while (holding_check_lock([&] { return g_quarantine.pop(&entry); })) {
    check_freed(entry, 1);
    give_back(entry.chunk, true);
  }
  uint64_t unchecked = g_unchecked_blocks.load(std::memory_order_relaxed);
  if (unchecked != 0) {
    core::FixedText<256> line;
    line.str("check_heap=full: ")
        .grouped(unchecked)
        .chr(' ')
        .plural(unchecked, "block")
        .str(" (")
        .grouped(g_unchecked_bytes.load(std::memory_order_relaxed))
        .str(
            " bytes) had no redzones, memtrack having no memory left for their records: "
            "writes outside or after them are not checked");
    diag(line.data());
  }
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

void report_rate_passed_by() {
  uint64_t passed = g_rate_passed_by.load(std::memory_order_relaxed);
  if (passed == 0) return;
  core::FixedText<256> line;
  line.str("check_heap=sample: ")
      .grouped(passed)
      .chr(' ')
      .plural(passed, "block")
      .str(" picked for a guard page went without: a thread picked more than ")
      .grouped(static_cast<uint64_t>(g_flags.check_heap_max_per_sec))
      .str(" a second (check_heap_max_per_sec; 0 lifts the limit)");
  diag(line.data());
}

}  // namespace

bool guard_rate_allows(ThreadState& t) {
  // A generic cell rate: each checked block moves the thread's next time one gap on; a
  // block is passed by while that time runs more than a burst ahead of the clock.
  uint64_t now = core::sys::monotonic_ns();
  uint64_t burst_ns = g_heap_check.rate_gap_ns * (kRateBurst - 1);  // how far ahead it may run
  if (t.guard_rate_next_ns > now + burst_ns) {
    g_rate_passed_by.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  t.guard_rate_next_ns =
      (t.guard_rate_next_ns > now ? t.guard_rate_next_ns : now) + g_heap_check.rate_gap_ns;
  return true;
}

void check_heap_at_exit() {
  if (g_heap_check.interval != 0) {
    check_guarded_blocks();
    report_rate_passed_by();
  }
  if (g_heap_check.full) {
    RuntimeScope scope;
    check_redzoned_blocks();
  }
}

}  // namespace memtrack::rt
