// Orchestration of the leak scan. Calls libc (through proc_maps and stop_threads) but never
// malloc; while other threads are stopped it takes no lock they could hold, because the
// stopper only parks threads that are outside the runtime.
#include "runtime/leakcheck/leak_scan.h"

#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/leakcheck/custom_blocks.h"
#include "runtime/leakcheck/guarded_read.h"
#include "runtime/leakcheck/proc_maps.h"
#include "runtime/leakcheck/retention.h"
#include "runtime/leakcheck/root_regions.h"
#include "runtime/leakcheck/runtime_roots.h"
#include "runtime/leakcheck/stop_threads.h"
#include "runtime/runtime.h"
#include "runtime/unwind/elf_symbols.h"
#include "runtime/unwind/fast_unwind.h"

// glibc's list of open streams (libio/genops.c), linked through each FILE's _chain.
extern "C" FILE* _IO_list_all;

namespace memtrack::rt {
namespace {

ThreadStopper g_stopper;  // large; lives in .bss, never on a stack
// The thread pointers of the scan's threads (this one and the stopped ones), under the report
// lock; and the C runtime's roots of the scan in progress, for allocated_by_runtime.
uintptr_t g_thread_pointers[ThreadStopper::kMaxThreads + 1];
const RuntimeRoots* g_runtime_roots = nullptr;
// The root sources of the scan in progress when it keeps root edges for the retention graph
// (nullptr otherwise), under the report lock.
core::MmapArray<RootSource>* g_sources = nullptr;
core::MmapArray<FrameSpan>* g_frames = nullptr;  // the stacks' frames of g_sources
// Frames walked per stack, for naming the roots in it.
constexpr int kMaxNamedFrames = 256;

// Root words read from now on belong to a new source (retention.h). Without memory for it,
// they count in the previous one.
void begin_source(ReachabilityScan& scan, RootKind kind, int tid, uintptr_t start, uintptr_t end) {
  if (g_sources == nullptr) return;
  RootSource source;
  source.kind = kind;
  source.tid = static_cast<uint32_t>(tid);
  source.start = start;
  source.end = end;
  if (g_sources->try_push_back(source)) {
    scan.set_root_source(static_cast<uint32_t>(g_sources->size() - 1));
  }
}

// The current stack source's frames: the thread's from its registers (`regs` null: the calling
// thread's own) up to `stack_end`, and where its TLS lies.
void add_stack_frames(const uintptr_t* regs, uintptr_t sp, uintptr_t stack_end,
                      uintptr_t thread_pointer) {
  if (g_sources == nullptr || g_frames == nullptr || g_sources->size() == 0) return;
  FrameSpan walked[kMaxNamedFrames];
  bool complete = false;
  int count = regs == nullptr ? walk_own_frames(stack_end, walked, kMaxNamedFrames, &complete)
                              : walk_frames_from(regs[kPcRegister], sp, regs[kFpRegister],
                                                 stack_end, walked, kMaxNamedFrames, &complete);
  RootSource& source = (*g_sources)[g_sources->size() - 1];
  source.first_frame = static_cast<uint32_t>(g_frames->size());
  for (int i = 0; i < count; ++i) {
    if (!g_frames->try_push_back(walked[i])) return;  // the source keeps no frames
  }
  source.frame_count = static_cast<uint32_t>(count);
  source.frames_complete = complete;
  source.thread_pointer = thread_pointer;
}

// A writable mapping that holds a live thread's thread pointer outside its stack (the main
// thread's, in memory the dynamic linker mapped) holds its static TLS too: the current
// source learns the thread, so that root words around the thread pointer name its TLS.
void note_thread_pointer_in(uintptr_t begin, uintptr_t end) {
  if (g_sources == nullptr || g_sources->size() == 0) return;
  RootSource& source = (*g_sources)[g_sources->size() - 1];
  const uintptr_t self = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
  if (self >= begin && self < end) {
    source.tid = static_cast<uint32_t>(core::sys::current_tid());
    source.thread_pointer = self;
    return;
  }
  for (size_t i = 0; i < g_stopper.count(); ++i) {
    const StoppedThread& t = g_stopper.thread(i);
    if (t.captured && t.thread_pointer >= begin && t.thread_pointer < end) {
      source.tid = static_cast<uint32_t>(t.tid);
      source.thread_pointer = t.thread_pointer;
      return;
    }
  }
}

// Whether the block's allocator was called from the C runtime's own code (its stack's first
// frame, a return address, lies in one of the runtime's libraries).
bool allocated_by_runtime(uint32_t stack_id) {
  core::StackView stack = g_stacks.get(stack_id);
  return stack.frames != nullptr && stack.size > 0 && g_runtime_roots != nullptr &&
         g_runtime_roots->is_runtime_code(stack.frames[0] - 1);
}

uint64_t thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000 + static_cast<uint64_t>(now.tv_nsec);
}

bool snapshot_blocks(ScanBlocks& blocks, LeakScanStats* stats) {
  uint64_t start = core::sys::monotonic_ns();
  const size_t custom = custom_block_count();
  bool ok = blocks.try_reserve(g_allocs.size() + custom + 64);
  // The heap's blocks in address order: the sort then only merges in the table's.
  g_allocs.for_each_heap_in_address_order([&](const core::AllocRecord& rec) {
    if (!blocks.try_add(rec.ptr, rec.size, rec.stack_id, rec.ignored != 0)) ok = false;
  });
  // The program's own allocators' blocks (custom_blocks.h); the blocks that hold them (their
  // superblocks) are left out by the sort.
  if (custom > 0) {
    for_each_custom_block([&](const core::AllocRecord& rec) {
      if (!blocks.try_add(rec.ptr, rec.size, rec.stack_id, rec.ignored != 0)) ok = false;
    });
  }
  uint64_t collected = core::sys::monotonic_ns();
  stats->collect_ns = collected - start;
  ok = ok && blocks.try_sort(custom > 0);
  stats->sort_ns = core::sys::monotonic_ns() - collected;
  return ok;
}

bool contains_block_start(const ScanBlocks& blocks, uintptr_t begin, uintptr_t end) {
  size_t first = blocks.first_at(begin);
  return first < blocks.size() && blocks.start(first) < end;
}

// The mapping glibc made for a block it mmapped on its own (above the mmap threshold), or
// false if `block` does not look like one: its chunk header says IS_MMAPPED, and the mapping
// (chunk start minus the alignment gap kept in prev_size, plus the chunk size) is
// page-aligned and inside [begin, end). Any other allocator's blocks fail these checks.
bool mmapped_chunk_of(const ScanBlocks& blocks, size_t index, uintptr_t begin, uintptr_t end,
                      core::sys::MemoryRange* /*out*/ range) {
  const uintptr_t block_start = blocks.start(index);
  const uint64_t block_size = blocks.size_of(index);
  constexpr uint64_t kIsMmapped = 2;
  const uintptr_t page = core::sys::page_size();
  uintptr_t chunk = block_start - 2 * kWord;  // prev_size and size, size_t each
  if (block_start < begin + 2 * kWord || chunk >= end) return false;
  uint64_t gap = 0;
  uint64_t size_field = 0;
  if (!try_read_word(chunk, &gap) || !try_read_word(chunk + kWord, &size_field)) return false;
  uint64_t size = size_field & ~uint64_t{7};
  if ((size_field & kIsMmapped) == 0 || gap > chunk - begin) return false;
  uintptr_t map_start = chunk - gap;
  if ((map_start & (page - 1)) != 0 || ((gap + size) & (page - 1)) != 0) return false;
  if (size > end - chunk || block_start + block_size > chunk + size) return false;
  *range = core::sys::MemoryRange{map_start, chunk + static_cast<uintptr_t>(size)};
  return true;
}

// Scans [begin, end) as roots, leaving out memtrack's own mappings (sorted by start).
// Large reservations (runtimes and allocators reserve gigabytes they never touch) are scanned
// page by page where mincore says a page is resident: a page never touched holds only zeros,
// and reading it would make the kernel back it with memory. Anonymous pages that are swapped
// out are skipped too, which can only make a block look less reachable than it is.
void scan_resident(ReachabilityScan& scan, uintptr_t begin, uintptr_t end) {
  constexpr uintptr_t kSmall = uintptr_t{64} << 20;
  if (end - begin <= kSmall) {
    scan.scan_root_range(begin, end);
    return;
  }
  const uintptr_t page = core::sys::page_size();
  unsigned char resident[256];
  uintptr_t first_page = begin & ~(page - 1);
  for (uintptr_t chunk = first_page; chunk < end; chunk += page * sizeof(resident)) {
    uintptr_t chunk_end = chunk + page * sizeof(resident);
    if (chunk_end > end) chunk_end = end;
    if (mincore(reinterpret_cast<void*>(chunk), chunk_end - chunk, resident) != 0) {
      scan.scan_root_range(chunk < begin ? begin : chunk, chunk_end);
      continue;
    }
    for (uintptr_t p = chunk; p < chunk_end; p += page) {
      if ((resident[(p - chunk) / page] & 1) == 0) continue;
      uintptr_t from = p < begin ? begin : p;
      uintptr_t to = p + page < chunk_end ? p + page : chunk_end;
      scan.scan_root_range(from, to);
    }
  }
}

void scan_without_own(ReachabilityScan& scan, uintptr_t begin, uintptr_t end,
                      const core::MmapArray<core::sys::MemoryRange>& own) {
  uintptr_t cursor = begin;
  for (const core::sys::MemoryRange& r : own) {
    if (r.end <= cursor || r.start >= end) continue;
    if (r.start > cursor) scan_resident(scan, cursor, r.start);
    cursor = r.end;
  }
  if (cursor < end) scan_resident(scan, cursor, end);
}

// A stopped thread's stack pointer, if it lies in [begin, end), and the thread (*thread null
// for the calling thread); the red zone below it (128 bytes on x86-64) may hold live values
// too.
uintptr_t stack_pointer_in(uintptr_t begin, uintptr_t end, uintptr_t self_sp, int* tid,
                           const StoppedThread** thread) {
  *thread = nullptr;
  if (self_sp >= begin && self_sp < end) {
    *tid = core::sys::current_tid();
    return self_sp;
  }
  for (size_t i = 0; i < g_stopper.count(); ++i) {
    const StoppedThread& t = g_stopper.thread(i);
    if (!t.captured || t.sp < begin || t.sp >= end) continue;
    *tid = t.tid;
    *thread = &t;
    return t.sp - 128 < begin ? begin : t.sp - 128;
  }
  return 0;
}

// Copies the registry of memtrack's own mappings; resizing the array may itself add one.
[[maybe_unused]] bool is_live_thread_pointer(uintptr_t tcb) {
  if (tcb == reinterpret_cast<uintptr_t>(__builtin_thread_pointer())) return true;
  for (size_t i = 0; i < g_stopper.count(); ++i) {
    if (g_stopper.thread(i).captured && g_stopper.thread(i).thread_pointer == tcb) return true;
  }
  return false;
}

#if defined(__x86_64__)
// Whether the thread descriptor at `tcb` names one of the process's threads now. A live
// thread that did not stop for the scan (it blocks the stop signal: a sigwait thread) has no
// captured thread pointer, but its descriptor holds its tid. (The kernel clears the tid when a
// thread exits; a forked child keeps its parent's other threads' descriptors, whose tids are
// no threads of its own.)
bool descriptor_names_live_thread(uintptr_t tcb) {
  const size_t offset = thread_descriptor_tid_offset();
  uint64_t word = 0;
  if (offset == 0 || !try_read_word(tcb + offset, &word)) return false;
  const int tid = static_cast<int>(static_cast<uint32_t>(word));
  if (tid == 0) return false;
  for (size_t i = 0; i < g_stopper.count(); ++i) {
    if (g_stopper.thread(i).tid == tid) return true;
  }
  return false;
}

// glibc puts a thread's descriptor (TCB) at the top of its stack mapping; the TCB starts with
// tcbhead_t {tcb, dtv, self} where tcb and self point at the TCB itself. A region with that
// signature near its end whose TCB belongs to no live thread is the stack of a thread that
// has exited (glibc caches them). The main thread's TCB lives in a mapping ld.so made, and
// is live, so that mapping is scanned.
bool is_dead_thread_stack(const MapRegion& m) {
  uintptr_t from = m.end - m.start > 65536 ? m.end - 65536 : m.start;
  from = (from + 63) & ~uintptr_t{63};
  for (uintptr_t a = from; a + 24 <= m.end; a += 64) {
    uint64_t tcb = 0;
    uint64_t self = 0;
    if (try_read_word(a, &tcb) && tcb == a && try_read_word(a + 16, &self) && self == a) {
      return !is_live_thread_pointer(a) && !descriptor_names_live_thread(a);
    }
  }
  return false;
}
#else
// ARM's TLS layout (variant I) puts glibc's thread descriptor (struct pthread) below the
// thread pointer, without x86-64's self-pointing header. What it does hold is the stack
// mapping it lives in: stackblock (the mapping's start, guard page included) and
// stackblock_size, side by side, so that stackblock + stackblock_size is the mapping's end.
// A region with that pair near its end in which no live thread's thread pointer lies is the
// stack of a thread that has exited (glibc caches them).
bool is_dead_thread_stack(const MapRegion& m) {
  const uintptr_t page = core::sys::page_size();
  uintptr_t from = m.end - m.start > 65536 ? m.end - 65536 : m.start;
  bool found = false;
  for (uintptr_t a = from; a + 2 * kWord <= m.end && !found; a += kWord) {
    uint64_t block = 0;
    uint64_t size = 0;
    found = try_read_word(a, &block) && block <= m.start && (block & (page - 1)) == 0 &&
            try_read_word(a + kWord, &size) && block + size == m.end;
  }
  if (!found) return false;
  uintptr_t self = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
  if (self >= m.start && self < m.end) return false;
  for (size_t i = 0; i < g_stopper.count(); ++i) {
    const StoppedThread& t = g_stopper.thread(i);
    if (t.captured && t.thread_pointer >= m.start && t.thread_pointer < m.end) return false;
  }
  return true;
}
#endif

// A block's allocation sequence: kept by memtrack's own heap (read without a lock: other
// threads are stopped, maybe inside the allocation table's), 0 for the table's blocks.
uint64_t allocation_sequence(uintptr_t start) {
  core::AllocRecord rec;
  if (!g_allocs.heap().try_lookup(start, &rec)) return 0;
  return rec.sequence;
}

bool collect_own_mappings(core::MmapArray<core::sys::MemoryRange>& own) {
  for (;;) {
    size_t wanted = core::sys::own_mappings(nullptr, 0) + 16;
    if (!own.try_resize(wanted)) return false;
    size_t n = core::sys::own_mappings(own.data(), own.size());
    if (n <= own.size()) return own.try_resize(n);
  }
}

// A writable mapping that holds blocks is a malloc arena (skipped: its blocks are scanned as
// blocks, and its free chunks hold stale links) unless every block in it is a chunk glibc
// mmapped on its own. The kernel merges such a chunk with the program's neighbouring
// anonymous mappings (cc1plus's GC pages), so the rest of the mapping is scanned as roots.
void scan_around_mmapped_chunks(ReachabilityScan& scan, const ScanBlocks& blocks,
                                const MapRegion& m,
                                const core::MmapArray<core::sys::MemoryRange>& own) {
  constexpr size_t kMaxChunks = 64;
  core::sys::MemoryRange chunks[kMaxChunks];
  size_t count = 0;
  for (size_t i = blocks.first_at(m.start); i < blocks.size() && blocks.start(i) < m.end; ++i) {
    if (count == kMaxChunks || !mmapped_chunk_of(blocks, i, m.start, m.end, &chunks[count])) {
      return;  // an arena, or more than we can track: leave it all to the block scan
    }
    ++count;
  }
  uintptr_t cursor = m.start;
  for (size_t i = 0; i < count; ++i) {  // in address order, as the blocks are
    if (chunks[i].start > cursor) scan_without_own(scan, cursor, chunks[i].start, own);
    if (chunks[i].end > cursor) cursor = chunks[i].end;
  }
  if (cursor < m.end) scan_without_own(scan, cursor, m.end, own);
}

// Attached to a running process (hooks/attach.h), the heap also holds the blocks from before
// the attach, which memtrack has no record of and which may point to blocks allocated since (a
// map built before, grown after). So everything in it outside the blocks memtrack knows is a
// root: no block still referenced is called lost. What this misses: a block whose last
// pointer lies in a free chunk, or in an old block that is itself lost, looks reachable.
void scan_outside_blocks(ReachabilityScan& scan, const ScanBlocks& blocks, const MapRegion& m,
                         const core::MmapArray<core::sys::MemoryRange>& own) {
  uintptr_t cursor = m.start;
  for (size_t i = blocks.first_at(m.start); i < blocks.size() && blocks.start(i) < m.end; ++i) {
    uintptr_t start = blocks.start(i);
    if (start > cursor) scan_without_own(scan, cursor, start, own);
    uintptr_t end = start + static_cast<uintptr_t>(blocks.size_of(i));
    if (end > cursor) cursor = end;
  }
  if (cursor < m.end) scan_without_own(scan, cursor, m.end, own);
}

// The program's __lsan_register_root_region regions: only their readable parts, as LSan
// skips what is inaccessible (a region may span mprotect'ed pages).
void scan_registered_regions(ReachabilityScan& scan, const core::MmapArray<MapRegion>& maps) {
  static uintptr_t regions[kMaxRootRegions][2];  // under the report lock
  size_t count = copy_root_regions(regions, kMaxRootRegions);
  for (size_t i = 0; i < count; ++i) {
    for (const MapRegion& m : maps) {
      if (!m.readable || m.special || m.device) continue;
      uintptr_t begin = regions[i][0] > m.start ? regions[i][0] : m.start;
      uintptr_t end = regions[i][1] < m.end ? regions[i][1] : m.end;
      if (begin < end) {
        begin_source(scan, RootKind::kRegion, 0, regions[i][0], regions[i][1]);
        scan.scan_root_range(begin, end);
      }
    }
  }
}

// The C runtime's roots, where they lie in readable and writable mappings (a thread's
// descriptor of a thread that has gone, or TLS the kernel has not mapped, is skipped).
void scan_runtime_roots(ReachabilityScan& scan, const RuntimeRoots& roots,
                        const core::MmapArray<MapRegion>& maps) {
  for (size_t i = 0; i < roots.count(); ++i) {
    const core::sys::MemoryRange& r = roots.ranges()[i];
    for (const MapRegion& m : maps) {
      if (!m.readable || !m.writable || m.special || m.device) continue;
      uintptr_t begin = r.start > m.start ? r.start : m.start;
      uintptr_t end = r.end < m.end ? r.end : m.end;
      if (begin < end) scan.scan_root_range(begin, end);
    }
  }
}

// The program's open streams: glibc allocates each FILE for the program and keeps it on its
// list until fclose. They are the program's (a stream never closed is still reachable, as
// memcheck says), not the C runtime's own state, so the program's roots reach them before
// the runtime's list does. Read guarded: a stopped thread may be changing the list.
void scan_open_streams(ReachabilityScan& scan) {
  uint64_t stream = 0;
  if (!try_read_word(reinterpret_cast<uintptr_t>(&_IO_list_all), &stream)) return;
  begin_source(scan, RootKind::kStream, 0, 0, 0);
  for (size_t n = 0; stream != 0 && n < (size_t{1} << 20); ++n) {
    scan.scan_root_word(static_cast<uintptr_t>(stream));
    if (!try_read_word(static_cast<uintptr_t>(stream) + offsetof(FILE, _chain), &stream)) return;
  }
}

// Builds the runtime roots' ranges for this thread and the stopped ones.
bool finish_runtime_roots(RuntimeRoots& roots) {
  size_t count = 0;
  g_thread_pointers[count++] = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
  for (size_t i = 0; i < g_stopper.count() && count < ThreadStopper::kMaxThreads + 1; ++i) {
    const StoppedThread& t = g_stopper.thread(i);
    if (t.captured) g_thread_pointers[count++] = t.thread_pointer;
  }
  return roots.try_finish(g_thread_pointers, count);
}

uintptr_t g_globals_start = 0;
uintptr_t g_globals_end = 0;

struct OwnRange {
  uintptr_t start;
  uintptr_t end;
};

// Calls f on each part of `m` outside the n ranges.
template <typename F>
void for_each_part_outside(const MapRegion& m, const OwnRange* ranges, int n, F&& f) {
  if (n == 0) {
    f(m);
    return;
  }
  if (m.end <= ranges[0].start || m.start >= ranges[0].end) {
    for_each_part_outside(m, ranges + 1, n - 1, f);
    return;
  }
  MapRegion before = m;
  MapRegion after = m;
  before.end = ranges[0].start;
  after.start = ranges[0].end;
  if (before.start < before.end) for_each_part_outside(before, ranges + 1, n - 1, f);
  if (after.start < after.end) for_each_part_outside(after, ranges + 1, n - 1, f);
}

void scan_roots(ReachabilityScan& scan, const ScanBlocks& blocks,
                const core::MmapArray<MapRegion>& maps,
                const core::MmapArray<core::sys::MemoryRange>& own, uintptr_t self_sp) {
  uintptr_t self_start = 0;
  uintptr_t self_end = 0;
  skipped_code_range(&self_start, &self_end);
  // scan_globals and scan_stacks (LeakSanitizer's use_globals, use_stacks) split the
  // mappings: a live thread's stack, and everything else.
  auto scan_region = [&](const MapRegion& m) {
    if (contains_block_start(blocks, m.start, m.end)) {
      if (!g_flags.scan_globals) return;
      if (attached()) {
        begin_source(scan, RootKind::kOldHeap, 0, m.start, m.end);
        scan_outside_blocks(scan, blocks, m, own);
      } else {
        begin_source(scan, RootKind::kData, 0, m.start, m.end);
        scan_around_mmapped_chunks(scan, blocks, m, own);
      }
      return;
    }
    int tid = 0;
    const StoppedThread* thread = nullptr;
    uintptr_t sp = stack_pointer_in(m.start, m.end, self_sp, &tid, &thread);
    if (sp != 0) {
      begin_source(scan, RootKind::kStack, tid, m.start, m.end);
      if (thread != nullptr) {
        add_stack_frames(thread->regs, thread->sp, m.end, thread->thread_pointer);
      } else {
        add_stack_frames(nullptr, 0, m.end,
                         reinterpret_cast<uintptr_t>(__builtin_thread_pointer()));
      }
      if (g_flags.scan_stacks) scan_without_own(scan, sp, m.end, own);
      return;
    }
    if (!g_flags.scan_globals) return;
    begin_source(scan, RootKind::kData, 0, m.start, m.end);
    note_thread_pointer_in(m.start, m.end);
    // The stack of a thread that has exited holds only dead values (memcheck ignores it too).
    // The kernel (and qemu-user, which maps upwards) may merge a stack with memtrack's own
    // mappings next to it, so each piece between them is looked at on its own.
    uintptr_t cursor = m.start;
    auto scan_piece = [&](uintptr_t begin, uintptr_t end) {
      MapRegion piece = m;
      piece.start = begin;
      piece.end = end;
      if (!is_dead_thread_stack(piece)) scan_resident(scan, begin, end);
    };
    for (const core::sys::MemoryRange& r : own) {
      if (r.end <= cursor || r.start >= m.end) continue;
      if (r.start > cursor) scan_piece(cursor, r.start);
      cursor = r.end;
    }
    if (cursor < m.end) scan_piece(cursor, m.end);
  };
  // memtrack's own image (its globals) is no root; but the kernel merges its .bss with an
  // anonymous mapping of the program right after it, and that part is. Linked into a static
  // program, its globals are a range of the executable's of their own.
  const OwnRange own_image[] = {{self_start, self_end}, {g_globals_start, g_globals_end}};
  for (const MapRegion& m : maps) {
    if (!m.readable || !m.writable || m.special || m.device || (m.heap && !attached())) continue;
    for_each_part_outside(m, own_image, 2, scan_region);
  }
  if (g_flags.scan_registers) {
    for (size_t i = 0; i < g_stopper.count(); ++i) {
      const StoppedThread& t = g_stopper.thread(i);
      if (!t.captured) continue;
      begin_source(scan, RootKind::kRegisters, t.tid, 0, 0);
      for (uintptr_t reg : t.regs) scan.scan_root_word(reg);
    }
  }
  if (g_flags.scan_root_regions) scan_registered_regions(scan, maps);
  // FILE objects of open streams are no blocks (fd_tracking.h) but glibc's list of open
  // streams points to them: roots, like the list. Only inside a readable mapping, in case a
  // stream was freed behind the hooks' back.
  begin_source(scan, RootKind::kStream, 0, 0, 0);
  for_each_open_stream([&](uintptr_t begin, uintptr_t end) {
    for (const MapRegion& m : maps) {
      if (m.readable && begin >= m.start && end <= m.end) scan.scan_root_range(begin, end);
    }
  });
}

}  // namespace

bool scan_live_blocks(ScanBlocks& blocks, ReachabilityScan& scan, uintptr_t stack_top,
                      LeakScanStats* stats, RetentionGraph* retention, BlockDescription* block) {
  LeakScanStats local;
  LeakScanStats& times = stats != nullptr ? *stats : local;
  const uint64_t cpu_start = thread_cpu_ns();
  uint64_t mark = core::sys::monotonic_ns();
  auto lap = [&](uint64_t* phase) {
    uint64_t now = core::sys::monotonic_ns();
    *phase = now - mark;
    mark = now;
  };
  // The C runtime's libraries, before the threads stop (dl_iterate_phdr takes the loader's
  // lock, which a stopped thread may hold).
  RuntimeRoots runtime_roots;
  bool have_runtime_roots = runtime_roots.try_collect();
  (void)thread_descriptor_tid_offset();  // its dlsym, before any thread is stopped
  // First: no handler of the program may run on this thread from here on (a timer's would
  // change what the scan reads), and no read of the scan may fault.
  ScanGuard guard;
  g_stopper.stop_all();
  lap(&times.stop_ns);
  if (g_stopper.waited_out() > 0) {
    core::FixedText<160> message;
    message.str("warning: ").u64(g_stopper.waited_out());
    message.str(
        " thread(s) did not stop for the leak scan within a second; their stacks are "
        "read while they run");
    diag(message.data());
  }
  core::MmapArray<MapRegion> maps;
  core::MmapArray<core::sys::MemoryRange> own;
  core::MmapArray<core::sys::MemoryRange> readonly;
  core::MmapArray<RootSource> sources;
  core::MmapArray<FrameSpan> frames;
  bool ok = snapshot_blocks(blocks, &times);
  mark = core::sys::monotonic_ns();
  ok = ok && read_proc_maps(maps);
  for (size_t i = 0; ok && i < maps.size(); ++i) {
    const MapRegion& m = maps[i];
    if (m.file_backed && m.readable && !m.writable) {
      ok = readonly.try_push_back(core::sys::MemoryRange{m.start, m.end});
    }
  }
  ok = ok && collect_own_mappings(own);
  if (ok) {
    core::heap_sort(own.data(), own.size(),
                    [](const core::sys::MemoryRange& a, const core::sys::MemoryRange& b) {
                      return a.start < b.start;
                    });
    ok = scan.try_init(blocks, readonly);
  }
  lap(&times.maps_ns);
  have_runtime_roots = have_runtime_roots && finish_runtime_roots(runtime_roots);
  if (ok) {
    // The program's roots first, without the C runtime's; then the runtime's, whose blocks
    // that the program does not reach are the runtime's own (runtime_roots.h).
    if (have_runtime_roots) scan.set_excluded(runtime_roots.ranges(), runtime_roots.count());
    if (retention != nullptr) {
      g_sources = &sources;
      g_frames = &frames;
      (void)scan.keep_root_edges();  // without memory, the graph says it is incomplete
    }
    begin_source(scan, RootKind::kIgnored, 0, 0, 0);
    scan.mark_ignored();
    scan_roots(scan, blocks, maps, own, stack_top);
    if (have_runtime_roots) scan_open_streams(scan);
    g_sources = nullptr;
    g_frames = nullptr;
    lap(&times.roots_ns);
    ok = scan.propagate();
    if (ok && have_runtime_roots) {
      g_runtime_roots = &runtime_roots;
      scan.begin_runtime_roots(allocated_by_runtime);
      scan_runtime_roots(scan, runtime_roots, maps);
      ok = scan.propagate();
      g_runtime_roots = nullptr;
    }
    lap(&times.mark_ns);
    ok = ok && scan.classify_unreached(allocation_sequence);
    lap(&times.cliques_ns);
    // The graph reads the blocks again: before the threads resume.
    if (ok && retention != nullptr) {
      if (!retention->try_build(blocks, scan, sources.data(), sources.size(), describe_data_address,
                                frames.data(), block)) {
        retention->clear();
        diag("warning: no memory to find what holds the still-reachable blocks (retainers)");
      }
      lap(&times.retention_ns);
    }
  }
  g_stopper.resume_all();
  times.cpu_ns = thread_cpu_ns() - cpu_start;
  times.blocks = blocks.size();
  times.bytes = blocks.bytes_used() + scan.bytes_used() +
                (retention != nullptr ? retention->bytes_used() : 0);
  return ok;
}

void set_runtime_globals_range(uintptr_t begin, uintptr_t end) {
  g_globals_start = begin;
  g_globals_end = end;
}

}  // namespace memtrack::rt
