// Allocator misuse detection. Calls libc (_dl_find_object, through proc_maps) but never
// malloc. Verdicts on unknown pointers are given only when certain; anything else is passed
// on to the allocator, so a block memtrack did not see allocated never becomes a false error.
#include "runtime/record/misuse.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>

#include "core/spin_lock.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/leakcheck/proc_maps.h"
#include "runtime/link/real_functions.h"
#include "runtime/record/forwarded.h"
#include "runtime/record/record.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"
#include "runtime/unwind/unwind.h"

namespace memtrack::rt {
namespace {

void (*g_halt_report)(const char* how) = nullptr;

namespace result = core::result;

struct Freed {
  uintptr_t ptr;
  uint64_t stamp;  // orders entries of one address in different rings (see QuarantineRing)
  uint64_t size;
  uintptr_t free_caller;  // the return address in the function that called free
  uint32_t alloc_stack;
  uint32_t free_stack;  // the whole stack of the free with free_stacks, 0 otherwise
  result::FreeCall free_call;
  core::AllocFamily family;
  uint8_t aligned;
};

// A quarantine entry as stored: 32 bytes, two to a cache line, so the ring write of every
// free dirties two thirds of the lines a plain Freed (48 bytes) would. key: pointer/8 (bits
// 0-44; tracked blocks are 8-aligned below 2^48), free call (45-46), family (47-48), aligned
// (49), size bits 39-52 (50-63). size_and_stack: size bits 0-38, allocation stack id (39-63;
// ids are at most 2^24). free_site: the free's caller, or with bit 63 set its stack id.
// stamp: 0 while the entry is being written (a per-entry sequence lock, see write_entry).
// The words are relaxed atomics: another thread may read an entry while its owner writes it.
struct FreedSlot {
  std::atomic<uint64_t> key;
  std::atomic<uint64_t> stamp;
  std::atomic<uint64_t> size_and_stack;
  std::atomic<uint64_t> free_site;
};
static_assert(sizeof(FreedSlot) == 32);
constexpr uint64_t kFreedPointerMask = (uint64_t{1} << 45) - 1;
constexpr uint64_t kFreedLowSizeBits = 39;
constexpr uint64_t kFreedLowSizeMask = (uint64_t{1} << kFreedLowSizeBits) - 1;
constexpr uint64_t kFreeSiteIsStack = uint64_t{1} << 63;

Freed unpack_freed(uint64_t key, uint64_t stamp, uint64_t size_and_stack, uint64_t free_site) {
  Freed f{};
  f.ptr = static_cast<uintptr_t>((key & kFreedPointerMask) << 3);
  f.stamp = stamp;
  f.size = (key >> 50) << kFreedLowSizeBits | (size_and_stack & kFreedLowSizeMask);
  f.alloc_stack = static_cast<uint32_t>(size_and_stack >> 39);
  if ((free_site & kFreeSiteIsStack) != 0) {
    f.free_stack = static_cast<uint32_t>(free_site & ~kFreeSiteIsStack);
  } else {
    f.free_caller = static_cast<uintptr_t>(free_site);
  }
  f.free_call = static_cast<result::FreeCall>((key >> 45) & 3);
  f.family = static_cast<core::AllocFamily>((key >> 47) & 3);
  f.aligned = static_cast<uint8_t>((key >> 49) & 1);
  return f;
}

// The quarantine: rings of recently freed blocks. Each thread that frees takes one of the
// kOwnedRings for itself and writes it with plain stores: no lock, no shared cache line, no
// atomic read-modify-write. At its exit (a pthread key destructor) the ring is given back
// with its entries, which stay searchable until the next thread that takes it overwrites
// them. Threads that find every owned ring taken, and frees a thread makes after it gave its
// ring back (later thread-exit destructors), write one of the kSharedRings under its lock.
// Only the rare lookup (a free of an unknown pointer) reads the rings, all of them, without
// taking a lock: each entry is checked against its stamp (write_entry, read_entry).
//
// The stamp orders the entries for one address found in different rings (the address was
// freed, reused and freed again, on another thread): the newest names the first free of a
// double free. It is the allocation table's number for the erase of the block (try_erase's
// sequence): every erase of one address goes through the same shard, under its lock, which
// also orders the reuse in between, so the later free of an address always has the larger
// stamp, and the ring write needs no clock and no memory shared with other threads. (A
// time-stamp counter read per free cost 17% of churn's time on a virtual machine, and one
// read per 64 frees, kept in order across threads through a shared latest reading, made
// that line move between cores: 1.19x CPU with 2 threads.)
constexpr size_t kOwnedRings = 64;
constexpr size_t kSharedRings = 8;
constexpr size_t kRingEntries = 8192;

struct alignas(64) QuarantineRing {
  std::atomic<bool> owned{false};          // owned rings: taken by a live thread
  core::SpinLock lock;                     // shared rings: held by their writer
  std::atomic<FreedSlot*> slots{nullptr};  // kRingEntries entries, mapped on first use
  std::atomic<uint64_t> written{0};        // entries ever written; the next goes to written % size
};

QuarantineRing g_rings[kOwnedRings + kSharedRings];
std::atomic<unsigned> g_next_shared_ring{0};
pthread_key_t g_ring_key;
bool g_have_ring_key = false;
constexpr unsigned kNoRing = ~0u;  // t_thread.quarantine_ring before the thread's first free

core::SpinLock g_errors_lock;
core::MmapArray<ErrorEntry> g_errors;  // guarded by g_errors_lock
constexpr size_t kMaxErrorContexts = 10000;

// An entry's words as write_entry stores them, packed straight from the record (the layout
// is FreedSlot's; unpack_freed reverses it).
struct PackedFreed {
  uint64_t key;
  uint64_t stamp;
  uint64_t size_and_stack;
  uint64_t free_site;
};

PackedFreed pack_freed(const core::AllocRecord& rec, uint64_t stamp, result::FreeCall call,
                       uintptr_t free_caller, uint32_t free_stack) {
  uint64_t size = rec.size;
  return PackedFreed{
      .key = rec.ptr >> 3 | static_cast<uint64_t>(call) << 45 |
             static_cast<uint64_t>(rec.family) << 47 |
             static_cast<uint64_t>(rec.aligned & 1) << 49 | (size >> kFreedLowSizeBits) << 50,
      .stamp = stamp,
      .size_and_stack = (size & kFreedLowSizeMask) | static_cast<uint64_t>(rec.stack_id) << 39,
      .free_site = free_stack != 0 ? (kFreeSiteIsStack | free_stack) : free_caller,
  };
}

// Called by the ring's only writer (its owner, or a holder of a shared ring's lock). The
// slot is taken before it is written, so a signal handler's free on the same thread takes
// the next one (a handler that runs between the load and the store of `written` overwrites
// this entry, or this one the handler's: one entry lost, never a torn one). The stamp
// (never 0: erase numbers start at 1) is the slot's sequence lock: 0 first, then the words,
// then the stamp (release), so a reader that sees the same non-zero stamp before and after
// the words read a whole entry. Inline in every free: the entry goes from the record to the
// slot's words without a Freed in between (about 30 instructions a free fewer).
__attribute__((always_inline)) inline void write_entry(QuarantineRing& ring, FreedSlot* slots,
                                                       const PackedFreed& f) {
  uint64_t index = ring.written.load(std::memory_order_relaxed);
  ring.written.store(index + 1, std::memory_order_release);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  FreedSlot& slot = slots[index % kRingEntries];
  slot.stamp.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot.key.store(f.key, std::memory_order_relaxed);
  slot.size_and_stack.store(f.size_and_stack, std::memory_order_relaxed);
  slot.free_site.store(f.free_site, std::memory_order_relaxed);
  slot.stamp.store(f.stamp, std::memory_order_release);
}

// Reads `slot` if it holds a whole entry for the pointer whose key is `key`.
bool read_entry(const FreedSlot& slot, uint64_t key, Freed* out) {
  uint64_t stamp = slot.stamp.load(std::memory_order_acquire);
  if (stamp == 0) return false;
  uint64_t packed_key = slot.key.load(std::memory_order_relaxed);
  if ((packed_key & kFreedPointerMask) != key) return false;
  uint64_t size_and_stack = slot.size_and_stack.load(std::memory_order_relaxed);
  uint64_t free_site = slot.free_site.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (slot.stamp.load(std::memory_order_relaxed) != stamp) return false;
  *out = unpack_freed(packed_key, stamp, size_and_stack, free_site);
  return true;
}

FreedSlot* map_ring() {
  return static_cast<FreedSlot*>(core::sys::map_pages(kRingEntries * sizeof(FreedSlot)));
}

// At a thread's exit (pthread key destructor, after its C++ thread_local destructors): gives
// its ring back. Frees after this use a shared ring.
void give_back_ring(void*) {
  unsigned index = t_thread.quarantine_ring;
  t_thread.quarantine_ring = static_cast<unsigned>(
      kOwnedRings + g_next_shared_ring.fetch_add(1, std::memory_order_relaxed) % kSharedRings);
  if (index < kOwnedRings) g_rings[index].owned.store(false, std::memory_order_release);
}

// The calling thread's ring: takes a free owned ring at its first free, or else a shared one.
unsigned my_ring() {
  if (t_thread.quarantine_ring != kNoRing) return t_thread.quarantine_ring;
  unsigned taken = kNoRing;
  for (unsigned i = 0; i < kOwnedRings && taken == kNoRing; ++i) {
    bool expected = false;
    if (!g_rings[i].owned.load(std::memory_order_relaxed) &&
        g_rings[i].owned.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      taken = i;
    }
  }
  if (taken == kNoRing) {
    taken = static_cast<unsigned>(
        kOwnedRings + g_next_shared_ring.fetch_add(1, std::memory_order_relaxed) % kSharedRings);
  } else if (g_have_ring_key) {
    pthread_setspecific(g_ring_key, &g_rings[taken]);
  }
  if (t_thread.quarantine_ring != kNoRing) {
    // A signal handler's free on this thread took a ring meanwhile: keep that one.
    if (taken < kOwnedRings) g_rings[taken].owned.store(false, std::memory_order_release);
    return t_thread.quarantine_ring;
  }
  t_thread.quarantine_ring = taken;
  return taken;
}

void quarantine(const core::AllocRecord& rec, uint64_t erase_sequence, result::FreeCall call,
                uintptr_t caller) {
  // The caller of free alone needs no unwinding (the hook's return address) and no stack
  // depot lookup, so the first free's site is always known; its whole stack only with
  // free_stacks. A one-frame stack is made of the caller when an error needs it.
  uintptr_t free_caller = 0;
  uint32_t free_stack = 0;
  if (g_flags.free_stacks) {
    free_stack = capture_current_stack();
  } else {
    free_caller = caller;
  }
  PackedFreed entry = pack_freed(rec, erase_sequence, call, free_caller, free_stack);
  unsigned index = my_ring();
  QuarantineRing& ring = g_rings[index];
  if (index < kOwnedRings) {
    FreedSlot* slots = ring.slots.load(std::memory_order_relaxed);
    if (slots == nullptr) {
      slots = map_ring();
      if (slots == nullptr) return;
      ring.slots.store(slots, std::memory_order_release);
    }
    write_entry(ring, slots, entry);
    return;
  }
  core::SpinLockGuard guard(ring.lock);
  FreedSlot* slots = ring.slots.load(std::memory_order_relaxed);
  if (slots == nullptr) {
    slots = map_ring();
    if (slots == nullptr) return;
    ring.slots.store(slots, std::memory_order_release);
  }
  write_entry(ring, slots, entry);
}

// The most recent quarantine entry for `ptr`, over all rings, newest first in each.
bool find_freed(uintptr_t ptr, Freed* out) {
  bool found = false;
  if ((ptr & 7) != 0) return false;  // never a tracked block's address
  uint64_t key = static_cast<uint64_t>(ptr) >> 3;
  for (QuarantineRing& ring : g_rings) {
    const FreedSlot* slots = ring.slots.load(std::memory_order_acquire);
    if (slots == nullptr) continue;
    uint64_t written = ring.written.load(std::memory_order_acquire);
    uint64_t count = written < kRingEntries ? written : kRingEntries;
    for (uint64_t i = 0; i < count; ++i) {
      Freed f{};
      if (!read_entry(slots[(written - 1 - i) % kRingEntries], key, &f)) continue;
      if (!found || f.stamp > out->stamp) *out = f;
      found = true;
      break;  // the newest of this ring
    }
  }
  return found;
}

result::AllocCall alloc_call_of(core::AllocFamily family) {
  switch (family) {
    case core::AllocFamily::kMalloc:
      return result::AllocCall::kMalloc;
    case core::AllocFamily::kNew:
      return result::AllocCall::kNew;
    case core::AllocFamily::kNewArray:
      return result::AllocCall::kNewArray;
  }
  return result::AllocCall::kNone;
}

const char* describe(result::ErrorKind kind) {
  switch (kind) {
    case result::ErrorKind::kDoubleFree:
      return "double free";
    case result::ErrorKind::kInvalidFree:
      return "invalid free";
    case result::ErrorKind::kMismatchedFree:
      return "mismatched free";
    case result::ErrorKind::kReallocAfterFree:
      return "realloc of a freed pointer";
    case result::ErrorKind::kInvalidRead:
      return "invalid read";
    case result::ErrorKind::kInvalidWrite:
      return "invalid write";
    case result::ErrorKind::kWriteOutsideBlock:
      return "write outside a block";
    case result::ErrorKind::kWriteAfterFree:
      return "write after free";
  }
  return "misuse";
}

void record_error(ErrorEntry entry) {
  bool first = false;
  {
    core::SpinLockGuard guard(g_errors_lock);
    for (ErrorEntry& known : g_errors) {
      if (known.kind == entry.kind && known.bad_stack == entry.bad_stack) {
        ++known.occurrences;
        entry.occurrences = 0;
        break;
      }
    }
    if (entry.occurrences != 0 && g_errors.size() < kMaxErrorContexts) {
      first = g_errors.try_push_back(entry);
    }
  }
  // Under memtrack run (a result directory) the CLI reports the error with its stacks, in
  // the report's own format and place (--log-file, --json): no raw line on the program's
  // stderr then.
  bool standalone = g_flags.result_dir[0] == '\0';
  if (first && standalone && !silenced()) {
    core::FixedText<256> line;
    line.str("error: ").str(describe(entry.kind)).str(" at ").hex(entry.address);
    line.str(" (the report at exit shows the stacks)");
    diag(line.data());
  }
  if (g_flags.halt_on_error) {
    if (standalone && !silenced()) diag("halt_on_error=1: reporting and aborting");
    if (g_halt_report != nullptr) g_halt_report("aborted on an allocator error");
    abort();
  }
}

bool called_from_dynamic_linker(uint32_t stack_id) {
  core::StackView stack = g_stacks.get(stack_id);
  if (stack.frames == nullptr || stack.size == 0) return false;
  dl_find_object object{};
  if (_dl_find_object(reinterpret_cast<void*>(stack.frames[0] - 1), &object) != 0) return false;
  const char* name = object.dlfo_link_map != nullptr ? object.dlfo_link_map->l_name : nullptr;
  if (name == nullptr) return false;
  const char* base = name;
  for (const char* p = name; *p != '\0'; ++p) {
    if (*p == '/') base = p + 1;
  }
  return core::strings_equal(base, 9, "ld-linux-") || core::strings_equal(base, 8, "ld-linux");
}

// Where an unknown pointer points: the current thread's stack, a module's data, or neither.
result::ErrorWhere locate(uintptr_t ptr) {
  auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  // The thread's own stack, when known (stack_scrub.h), by its bounds: the mapping it lies in
  // may also hold an allocator's heap that the kernel merged with it (a thread's stack and a
  // glibc arena, both anonymous and adjacent, are one line of /proc/self/maps).
  if (t_thread.stack_size != 0 && t_thread.stack_size != ~uintptr_t{0}) {
    if (ptr - t_thread.stack_low < t_thread.stack_size) return result::ErrorWhere::kStack;
    // Running on it, the pointer outside it is on no stack of this thread's; on another
    // (an alternate signal stack), the mapping test below tells.
    if (sp - t_thread.stack_low < t_thread.stack_size) sp = 0;
  }
  core::MmapArray<MapRegion> maps;
  if (sp != 0 && read_proc_maps(maps)) {
    for (const MapRegion& m : maps) {
      if (ptr >= m.start && ptr < m.end && sp >= m.start && sp < m.end) {
        return result::ErrorWhere::kStack;
      }
    }
  }
  dl_find_object object{};
  if (_dl_find_object(reinterpret_cast<void*>(ptr), &object) == 0) {
    return result::ErrorWhere::kGlobal;
  }
  return result::ErrorWhere::kUnknown;
}

bool find_containing(uintptr_t ptr, core::AllocRecord* out) {
  // The heap's chunk follows from the address; the table's blocks are searched.
  if (g_allocs.heap_records(ptr)) {
    return g_allocs.heap().try_find_containing(ptr, out);
  }
  bool found = false;
  g_allocs.table().for_each([&](const core::AllocRecord& rec) {
    uint64_t extent = rec.size == 0 ? 1 : rec.size;
    if (!found && ptr > rec.ptr && ptr - rec.ptr < extent) {
      *out = rec;
      found = true;
    }
  });
  return found;
}

// Out of line, as report_mismatched_free: the free path's own frame stays small.
__attribute__((noinline, cold)) Release judge_unknown(uintptr_t ptr, result::FreeCall call,
                                                      bool aligned) {
  // If anything went untracked, an unknown pointer may be a real block: do not judge.
  if (g_stats.untracked_allocations.load(std::memory_order_relaxed) > 0) return Release::kUnknown;
  // A real block a signal handler allocated while it interrupted the runtime.
  if (forget_forwarded(reinterpret_cast<const void*>(ptr))) return Release::kUnknown;
  ErrorEntry e{};
  e.free_call = call;
  e.free_aligned = aligned ? 1 : 0;
  e.occurrences = 1;
  e.address = ptr;
  e.alloc_call = result::AllocCall::kNone;
  Freed freed{};
  core::AllocRecord block;
  bool was_freed = find_freed(ptr, &freed);
  // A free chunk of the heap that had a record: freed before, though the quarantine has no
  // entry (its ring moved on, or the sampled mode's lean free made none: record.h).
  bool heap_freed = !was_freed && g_allocs.heap_records(ptr) && g_allocs.heap().is_freed_chunk(ptr);
  bool inside = !was_freed && !heap_freed && find_containing(ptr, &block);
  result::ErrorWhere where = result::ErrorWhere::kHeap;
  if (!was_freed && !heap_freed && !inside) {
    where = locate(ptr);
    // Passed on without taking a stack: in a static program libgcc frees its own FDE tables
    // at exit while holding the unwinder's lock, which a stack taken here would wait for.
    if (where == result::ErrorWhere::kUnknown) return Release::kUnknown;
  }
  e.bad_stack = capture_current_stack();
  // ld.so frees memory from its start-up allocator, which memtrack never saw.
  if (called_from_dynamic_linker(e.bad_stack)) return Release::kUnknown;
  if (was_freed) {
    e.kind = call == result::FreeCall::kRealloc ? result::ErrorKind::kReallocAfterFree
                                                : result::ErrorKind::kDoubleFree;
    e.where = result::ErrorWhere::kHeap;
    e.alloc_call = alloc_call_of(freed.family);
    e.alloc_aligned = freed.aligned;
    e.alloc_stack = freed.alloc_stack;
    e.free_stack = freed.free_stack;
    if (e.free_stack == 0 && freed.free_caller != 0) {
      e.free_stack = g_stacks.intern(&freed.free_caller, 1);
    }
    e.block_start = ptr;
    e.block_size = freed.size;
  } else if (heap_freed) {  // no record of the block: its size and stacks are unknown
    e.kind = call == result::FreeCall::kRealloc ? result::ErrorKind::kReallocAfterFree
                                                : result::ErrorKind::kDoubleFree;
    e.where = result::ErrorWhere::kHeap;
  } else if (inside) {
    e.kind = result::ErrorKind::kInvalidFree;
    e.where = result::ErrorWhere::kHeap;
    e.alloc_call = alloc_call_of(block.family);
    e.alloc_aligned = block.aligned;
    e.alloc_stack = block.stack_id;
    e.block_start = block.ptr;
    e.block_size = block.size;
  } else {
    e.where = where;
    e.kind = result::ErrorKind::kInvalidFree;
  }
  record_error(e);
  return Release::kRejected;
}

// free needs the malloc family; delete a new block and delete[] a new[] one, with the same
// alignedness; realloc a malloc block.
bool matches(const core::AllocRecord& rec, result::FreeCall call, bool aligned) {
  switch (call) {
    case result::FreeCall::kFree:
    case result::FreeCall::kRealloc:
      return rec.family == core::AllocFamily::kMalloc;
    case result::FreeCall::kDelete:
      return rec.family == core::AllocFamily::kNew && (rec.aligned != 0) == aligned;
    case result::FreeCall::kDeleteArray:
      return rec.family == core::AllocFamily::kNewArray && (rec.aligned != 0) == aligned;
  }
  return true;
}

}  // namespace

namespace {

// A free whose call does not match the allocation's (free of new, delete of new[]...).
__attribute__((noinline, cold)) void report_mismatched_free(const core::AllocRecord& rec,
                                                            result::FreeCall call, bool aligned) {
  ErrorEntry e{};
  e.kind = result::ErrorKind::kMismatchedFree;
  e.where = result::ErrorWhere::kHeap;
  e.alloc_call = alloc_call_of(rec.family);
  e.free_call = call;
  e.alloc_aligned = rec.aligned;
  e.free_aligned = aligned ? 1 : 0;
  e.occurrences = 1;
  e.bad_stack = capture_current_stack();
  e.alloc_stack = rec.stack_id;
  e.address = rec.ptr;
  e.block_start = rec.ptr;
  e.block_size = rec.size;
  record_error(e);  // new and malloc share one heap (memtrack's or glibc's): still freed
}

}  // namespace

Release release_block(void* ptr, result::FreeCall call, bool aligned, uintptr_t caller,
                      core::AllocRecord* out, bool free_tracked) {
  uint64_t erase_sequence = 0;
  bool freed = false;
  if (!record_free(ptr, out, &erase_sequence, free_tracked ? &freed : nullptr)) {
    // Inside fclose: the FILE object glibc frees was never recorded (fd_tracking.h).
    // Attached to a running process, an unknown block is one from before the attach.
    // Attached (or a hook still running as the runtime detaches), an unknown block may be
    // one from before the attach: never judged.
    if (kAttachRuntime) {
      if (attached()) {
        g_stats.preexisting_frees.fetch_add(1, std::memory_order_relaxed);
        g_stats.preexisting_freed_bytes.fetch_add(g_real.malloc_usable_size(ptr),
                                                  std::memory_order_relaxed);
      }
      return Release::kUnknown;
    }
    if (!g_flags.detect_misuse || in_stdio_scope()) return Release::kUnknown;
    RuntimeScope scope;
    return judge_unknown(reinterpret_cast<uintptr_t>(ptr), call, aligned);
  }
  Release tracked = freed ? Release::kFreed : Release::kTracked;
  if (!g_flags.detect_misuse) return tracked;
  RuntimeScope scope;
  if (!matches(*out, call, aligned)) report_mismatched_free(*out, call, aligned);
  quarantine(*out, erase_sequence, call, caller);
  return tracked;
}

void set_halt_report(void (*report)(const char* how)) {
  g_halt_report = report;
}

void record_heap_error(const ErrorEntry& entry) {
  record_error(entry);
}

bool copy_errors(core::MmapArray<ErrorEntry>& out) {
  core::SpinLockGuard guard(g_errors_lock);
  for (const ErrorEntry& e : g_errors) {
    if (!out.try_push_back(e)) return false;
  }
  return true;
}

void forget_errors() {
  core::SpinLockGuard guard(g_errors_lock);
  g_errors.clear();
}

void init_misuse() {
  g_have_ring_key = pthread_key_create(&g_ring_key, give_back_ring) == 0;
}

// Owned rings need no lock for fork: an entry another thread was writing stays at stamp 0 in
// the child, where no reader takes it.
void misuse_lock_all() {
  for (size_t i = kOwnedRings; i < kOwnedRings + kSharedRings; ++i) g_rings[i].lock.lock();
  g_errors_lock.lock();
}

void misuse_unlock_all() {
  g_errors_lock.unlock();
  for (size_t i = kOwnedRings; i < kOwnedRings + kSharedRings; ++i) g_rings[i].lock.unlock();
}

// The child's only thread keeps its ring; the other threads' rings are free to take.
void misuse_reset_after_fork() {
  g_errors_lock.reset_after_fork();
  for (size_t i = 0; i < kOwnedRings; ++i) {
    if (i != t_thread.quarantine_ring) g_rings[i].owned.store(false, std::memory_order_relaxed);
  }
  for (size_t i = kOwnedRings; i < kOwnedRings + kSharedRings; ++i) {
    g_rings[i].lock.reset_after_fork();
  }
}

}  // namespace memtrack::rt
