// Allocator misuse detection. Calls libc (_dl_find_object, through proc_maps) but never
// malloc. Verdicts on unknown pointers are given only when certain; anything else is passed
// on to the allocator, so a block memtrack did not see allocated never becomes a false error.
#include "runtime/record/misuse.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include "core/spin_lock.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/leakcheck/proc_maps.h"
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
  uint64_t stamp;  // time stamp counter: orders entries of different shards
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
struct PackedFreed {
  uint64_t key;
  uint64_t stamp;
  uint64_t size_and_stack;
  uint64_t free_site;
};
static_assert(sizeof(PackedFreed) == 32);
constexpr uint64_t kFreedPointerMask = (uint64_t{1} << 45) - 1;
constexpr uint64_t kFreedLowSizeBits = 39;
constexpr uint64_t kFreedLowSizeMask = (uint64_t{1} << kFreedLowSizeBits) - 1;
constexpr uint64_t kFreeSiteIsStack = uint64_t{1} << 63;

PackedFreed pack_freed(const Freed& f) {
  return PackedFreed{
      f.ptr >> 3 | static_cast<uint64_t>(f.free_call) << 45 |
          static_cast<uint64_t>(f.family) << 47 | static_cast<uint64_t>(f.aligned & 1) << 49 |
          (f.size >> kFreedLowSizeBits) << 50,
      f.stamp, (f.size & kFreedLowSizeMask) | static_cast<uint64_t>(f.alloc_stack) << 39,
      f.free_stack != 0 ? (kFreeSiteIsStack | f.free_stack) : f.free_caller};
}

Freed unpack_freed(const PackedFreed& p) {
  Freed f{};
  f.ptr = static_cast<uintptr_t>((p.key & kFreedPointerMask) << 3);
  f.stamp = p.stamp;
  f.size = (p.key >> 50) << kFreedLowSizeBits | (p.size_and_stack & kFreedLowSizeMask);
  f.alloc_stack = static_cast<uint32_t>(p.size_and_stack >> 39);
  if ((p.free_site & kFreeSiteIsStack) != 0) {
    f.free_stack = static_cast<uint32_t>(p.free_site & ~kFreeSiteIsStack);
  } else {
    f.free_caller = static_cast<uintptr_t>(p.free_site);
  }
  f.free_call = static_cast<result::FreeCall>((p.key >> 45) & 3);
  f.family = static_cast<core::AllocFamily>((p.key >> 47) & 3);
  f.aligned = static_cast<uint8_t>((p.key >> 49) & 1);
  return f;
}

// One shard per thread (threads beyond 64 share), so frees on different threads never
// write the same cache line; only the rare lookup (a free of an unknown pointer) reads all.
constexpr size_t kQuarantineShards = 64;
constexpr size_t kQuarantinePerShard = 8192;

struct alignas(64) QuarantineShard {
  core::SpinLock lock;
  PackedFreed* ring = nullptr;  // kQuarantinePerShard entries, mapped on first use
  size_t next = 0;
  size_t used = 0;
};

QuarantineShard g_quarantine[kQuarantineShards];
core::SpinLock g_errors_lock;
core::MmapArray<ErrorEntry> g_errors;  // guarded by g_errors_lock
constexpr size_t kMaxErrorContexts = 10000;

std::atomic<unsigned> g_next_quarantine_shard{0};

QuarantineShard& my_quarantine_shard() {
  if (t_thread.quarantine_shard == ~0u) {
    t_thread.quarantine_shard =
        g_next_quarantine_shard.fetch_add(1, std::memory_order_relaxed) % kQuarantineShards;
  }
  return g_quarantine[t_thread.quarantine_shard];
}

uint32_t capture_here(int max_frames) {
  uintptr_t frames[core::kMaxFramesLimit];
  uint64_t hash = 0;
  int depth = capture_stack(frames, max_frames, &hash);
  return g_stacks.intern_hashed(frames, static_cast<uint32_t>(depth), hash);
}

void quarantine(const core::AllocRecord& rec, result::FreeCall call) {
  QuarantineShard& shard = my_quarantine_shard();
  // The caller of free alone needs no unwinding (the runtime's frame pointers lead to it)
  // and no stack depot lookup, so the first free's site is always known; its whole stack
  // only with free_stacks. A one-frame stack is made of the caller when an error needs it.
  uintptr_t free_caller = 0;
  uint32_t free_stack = 0;
  if (g_flags.free_stacks) {
    free_stack = capture_here(g_flags.max_frames);
  } else {
    uint64_t hash = 0;
    if (capture_stack(&free_caller, 1, &hash) != 1) free_caller = 0;
  }
  core::SpinLockGuard guard(shard.lock);
  if (shard.ring == nullptr) {
    shard.ring =
        static_cast<PackedFreed*>(core::sys::map_pages(kQuarantinePerShard * sizeof(PackedFreed)));
    if (shard.ring == nullptr) return;
  }
  shard.ring[shard.next] =
      pack_freed(Freed{rec.ptr, core::sys::tick_count(), rec.size, free_caller, rec.stack_id,
                       free_stack, call, rec.family, rec.aligned});
  shard.next = (shard.next + 1) % kQuarantinePerShard;
  if (shard.used < kQuarantinePerShard) ++shard.used;
}

// The most recent quarantine entry for `ptr`, over all shards.
bool find_freed(uintptr_t ptr, Freed* out) {
  bool found = false;
  if ((ptr & 7) != 0) return false;  // never a tracked block's address
  uint64_t key = static_cast<uint64_t>(ptr) >> 3;
  for (QuarantineShard& shard : g_quarantine) {
    core::SpinLockGuard guard(shard.lock);
    for (size_t i = 0; i < shard.used; ++i) {
      const PackedFreed& f =
          shard.ring[(shard.next + kQuarantinePerShard - 1 - i) % kQuarantinePerShard];
      if ((f.key & kFreedPointerMask) != key) continue;
      if (!found || f.stamp > out->stamp) *out = unpack_freed(f);
      found = true;
      break;  // the newest of this shard
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
  core::MmapArray<MapRegion> maps;
  if (read_proc_maps(maps)) {
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
  bool found = false;
  g_allocs.for_each([&](const core::AllocRecord& rec) {
    uint64_t extent = rec.size == 0 ? 1 : rec.size;
    if (!found && ptr > rec.ptr && ptr - rec.ptr < extent) {
      *out = rec;
      found = true;
    }
  });
  return found;
}

Release judge_unknown(uintptr_t ptr, result::FreeCall call, bool aligned) {
  // If anything went untracked, an unknown pointer may be a real block: do not judge.
  if (g_stats.untracked_allocations.load(std::memory_order_relaxed) > 0) return Release::kUnknown;
  ErrorEntry e{};
  e.free_call = call;
  e.free_aligned = aligned ? 1 : 0;
  e.occurrences = 1;
  e.address = ptr;
  e.alloc_call = result::AllocCall::kNone;
  Freed freed{};
  core::AllocRecord block;
  bool was_freed = find_freed(ptr, &freed);
  bool inside = !was_freed && find_containing(ptr, &block);
  result::ErrorWhere where = result::ErrorWhere::kHeap;
  if (!was_freed && !inside) {
    where = locate(ptr);
    // Passed on without taking a stack: in a static program libgcc frees its own FDE tables
    // at exit while holding the unwinder's lock, which a stack taken here would wait for.
    if (where == result::ErrorWhere::kUnknown) return Release::kUnknown;
  }
  e.bad_stack = capture_here(g_flags.max_frames);
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

Release release_block(void* ptr, result::FreeCall call, bool aligned, core::AllocRecord* out) {
  if (!record_free(ptr, out)) {
    // Inside fclose: the FILE object glibc frees was never recorded (fd_tracking.h).
    if (!g_flags.detect_misuse || in_stdio_scope()) return Release::kUnknown;
    RuntimeScope scope;
    return judge_unknown(reinterpret_cast<uintptr_t>(ptr), call, aligned);
  }
  if (!g_flags.detect_misuse) return Release::kTracked;
  RuntimeScope scope;
  if (!matches(*out, call, aligned)) {
    ErrorEntry e{};
    e.kind = result::ErrorKind::kMismatchedFree;
    e.where = result::ErrorWhere::kHeap;
    e.alloc_call = alloc_call_of(out->family);
    e.free_call = call;
    e.alloc_aligned = out->aligned;
    e.free_aligned = aligned ? 1 : 0;
    e.occurrences = 1;
    e.bad_stack = capture_here(g_flags.max_frames);
    e.alloc_stack = out->stack_id;
    e.address = out->ptr;
    e.block_start = out->ptr;
    e.block_size = out->size;
    record_error(e);  // glibc's new and malloc share one heap: the block is still freed
  }
  quarantine(*out, call);
  return Release::kTracked;
}

void set_halt_report(void (*report)(const char* how)) {
  g_halt_report = report;
}

bool copy_errors(core::MmapArray<ErrorEntry>& out) {
  core::SpinLockGuard guard(g_errors_lock);
  for (const ErrorEntry& e : g_errors) {
    if (!out.try_push_back(e)) return false;
  }
  return true;
}

void misuse_lock_all() {
  for (QuarantineShard& s : g_quarantine) s.lock.lock();
  g_errors_lock.lock();
}

void misuse_unlock_all() {
  g_errors_lock.unlock();
  for (QuarantineShard& s : g_quarantine) s.lock.unlock();
}

void misuse_reset_after_fork() {
  g_errors_lock.reset_after_fork();
  for (QuarantineShard& s : g_quarantine) s.lock.reset_after_fork();
}

}  // namespace memtrack::rt
