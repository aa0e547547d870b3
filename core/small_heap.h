// memtrack's own allocator for the program's blocks of up to 64 KiB: 2 MiB segments, each
// serving one size class, with each block's record in an array at the segment's start, and
// per-thread caches. A free finds the record by arithmetic on the address (no table, no
// lock, no foreign cache line), and the leak scan walks the record arrays.
// Runtime-safe: memory from mmap only, no libc beyond the raw system calls of sys_linux.
//
// A segment (2 MiB, aligned to 2 MiB, carved from 64 MiB reservations):
//
//   | header | record 0 | record 1 | ... | (to a page) | chunk 0 | chunk 1 | ... |
//
// Its class fixes the layout (heap_layout below: chunk_offset, chunks): chunk i
// is at segment + chunk_offset + i * size, its record at segment + 64 + 16 * i. A byte per
// 2 MiB of address space (segment_class_, reserved without memory behind it and touched
// only where segments are) says whether the heap has a segment there, and of which class:
// owns() is one load. Segments are never unmapped and never change class; the memory of
// free chunks that no thread took for a whole second goes back to the system, whole pages at
// a time (release_idle_pages), and so does every free chunk's at trim() (malloc_trim).
//
// Every chunk is free, allocated (handed out, no record yet: a FILE object glibc allocates
// inside fopen), or allocated and recorded. Free chunks are kept in singly linked lists
// threaded through their records (never through the chunk's own bytes, which a use after
// free may overwrite): each thread has a list per class, and a class has one central list,
// under its lock, where threads move batches to and from. A thread's lists move to the
// central ones when it exits (retire_thread).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/alloc_table.h"
#include "core/spin_lock.h"

namespace memtrack::core {

inline constexpr size_t kHeapClasses = 48;

// The size classes and where their chunks lie in a segment. In the header so that the sampled
// mode's fast path (SmallHeap::try_pop_recorded, try_push_unstacked) inlines into the hooks
// with its arithmetic on constants.
namespace heap_layout {

inline constexpr unsigned kSegmentShift = 21;
inline constexpr size_t kSegment = size_t{1} << kSegmentShift;
inline constexpr size_t kPage = 4096;
inline constexpr size_t kHeader = 64;    // sizeof(SmallHeap::Segment)
inline constexpr size_t kMetaSize = 16;  // sizeof(SmallHeap::Meta)

// 16 to 256 bytes by 16 (classes 0-15), then 4 classes per doubling up to 64 KiB (16-47):
// 320, 384, 448, 512, 640, ... 65536, so a block wastes at most a quarter of its chunk.
constexpr size_t class_size(size_t c) {
  if (c < 16) return 16 * (c + 1);
  size_t j = c - 16;
  size_t k = 8 + j / 4;
  return (size_t{1} << k) + (j % 4 + 1) * (size_t{1} << (k - 2));
}

// Chunks a thread takes from its class at a time, and keeps at most twice that: about 64 KiB
// of chunks, at least 2 and at most 64.
constexpr uint32_t batch(size_t c) {
  size_t n = size_t{64} * 1024 / class_size(c);
  return static_cast<uint32_t>(n < 2 ? 2 : n > 64 ? 64 : n);
}

constexpr size_t round_up(size_t value, size_t unit) {
  return (value + unit - 1) / unit * unit;
}

// A segment of class c: its header and records, then its chunks from a page boundary (so a
// chunk is aligned to every power of two up to a page that divides the class's size).
constexpr size_t chunks(size_t c) {
  size_t size = class_size(c);
  size_t n = (kSegment - kPage) / (size + kMetaSize);
  while (round_up(kHeader + kMetaSize * n, kPage) + n * size > kSegment) --n;
  return n;
}
constexpr size_t chunk_offset(size_t c) {
  return round_up(kHeader + kMetaSize * chunks(c), kPage);
}

// ceil(2^32 / (size / 16)): for an offset that is a multiple of the size, offset / 16 times
// this, shifted right by 32, is the chunk's index, exactly (the error, index * (this * d -
// 2^32) < index * d < 2^17, stays below 2^32), with no division; locate checks the result.
constexpr uint64_t reciprocal(size_t c) {
  uint64_t d = class_size(c) / 16;
  return ((uint64_t{1} << 32) + d - 1) / d;
}

// Every class's figures, a field of all classes to an array (so that one base address serves
// every lookup, each indexed by the class at a scale the machine's addressing has).
struct ClassTable {
  uint64_t size[kHeapClasses];          // of a chunk
  uint64_t chunk_bytes[kHeapClasses];   // chunks * size: chunk offsets at or past it hold none
  uint64_t reciprocal[kHeapClasses];    // locate's division by the size (above)
  uint32_t chunk_offset[kHeapClasses];  // of chunk 0 from its segment's start
  uint32_t chunks[kHeapClasses];        // per segment
  uint32_t batch[kHeapClasses];
};
constexpr ClassTable make_class_table() {
  ClassTable table{};
  for (size_t c = 0; c < kHeapClasses; ++c) {
    table.size[c] = class_size(c);
    table.chunk_bytes[c] = chunks(c) * class_size(c);
    table.reciprocal[c] = reciprocal(c);
    table.chunk_offset[c] = static_cast<uint32_t>(chunk_offset(c));
    table.chunks[c] = static_cast<uint32_t>(chunks(c));
    table.batch[c] = batch(c);
  }
  return table;
}
inline constexpr ClassTable kClasses = make_class_table();

}  // namespace heap_layout

// A thread's counts of records made and removed (and their bytes), in memory the heap owns
// and never frees: totals() reads them without touching the thread, which may have exited
// without retiring (a thread that first touched the heap after its thread-exit hooks ran).
// Written by its thread only (relaxed load and store, no read-modify-write).
struct alignas(64) HeapCounters {
  std::atomic<uint64_t> inserted;
  std::atomic<uint64_t> inserted_bytes;
  std::atomic<uint64_t> erased;
  std::atomic<uint64_t> erased_bytes;
  HeapCounters* next_free;  // while unused: the registry's free list, under its lock
};

// One per thread, zero-initialised (it lives in the runtime's initial-exec TLS block). Only
// its thread reads or writes it.
struct HeapThread {
  struct List {
    uintptr_t head;        // the record address of the first free chunk; 0: empty
    uintptr_t fresh_next;  // records [fresh_next, fresh_end) of chunks carved for this thread
    uintptr_t fresh_end;   // and never used, in one segment: taken in order, no list needed
    uint32_t count;        // chunks in the list
  };
  List lists[kHeapClasses];
  HeapCounters* counters;  // taken at the thread's first change to the heap
  uint64_t sequence;       // the last sequence number this thread gave (set_record)
  uint32_t unsynced;       // records since the thread last synchronised it
  bool retired;            // retire_thread ran: the central lists from now on
  // The chunk this thread last allocated or erased a record of, its class and its record's
  // address: the next call on it (a set_record after try_allocate, a try_deallocate after
  // try_erase) skips the arithmetic of locating it. Valid for the whole run, since a chunk's
  // place follows from its address and segments never go away or change class. The chunk's
  // address is kept inverted: this lives in thread-local storage, which the leak scan reads
  // as a root, and a plain copy would keep a block the program dropped reachable.
  uintptr_t located_chunk_inverted;
  uintptr_t located_meta;
  size_t located_class;
};

// Thread safe, except for the test_only_ and fork functions. Zero-initialised memory is a
// heap that is off (owns() false for every pointer) until try_init succeeds.
class SmallHeap {
 public:
  static constexpr size_t kMaxSize = 65536;
  static constexpr size_t kMaxAlignment = 4096;
  static constexpr uint32_t kSequenceSync = 1024;
  static constexpr unsigned kSegmentShift = heap_layout::kSegmentShift;
  static constexpr size_t kSegmentSize = heap_layout::kSegment;
  // Addresses the heap may hold: user space of x86-64 (47 bits) and aarch64 (48 bits).
  static constexpr uint64_t kAddressLimit = uint64_t{1} << 48;

  // Reserves the segment map (128 MiB of address space, no memory). Returns false if it
  // cannot (a 32-bit target, an address-space or overcommit limit): the heap stays off.
  // Call once, before any other use.
  [[nodiscard]] bool try_init();
  bool enabled() const { return segment_class_ != nullptr; }

  // True if `p` lies in one of the heap's segments (a chunk or not).
  bool owns(const void* p) const { return class_tag(reinterpret_cast<uintptr_t>(p)) != 0; }

  // A chunk of at least `size` bytes aligned to `alignment` (0 or a power of two; at most
  // kMaxAlignment), or nullptr if the heap cannot serve it (off, too large, or memory for a
  // new segment cannot be had): the caller uses the system allocator then. The chunk's
  // record is empty until set_record. `t` is the calling thread's. Fresh chunks are zero;
  // reused ones hold stale data. errno is left as it was.
  void* try_allocate(size_t size, size_t alignment, HeapThread& t);

  // try_allocate and set_record in one step, for the sampled mode's lean path (the record is
  // `rec`, whose ptr is ignored): the chunk's state is written once, already recorded, and
  // never located again. nullptr as try_allocate.
  void* try_allocate_recorded(size_t size, size_t alignment, const AllocRecord& rec, HeapThread& t);

  // Frees a chunk try_allocate returned. Returns false, and does nothing, if `p` is not the
  // start of an allocated chunk (a double free, an interior pointer): the heap's lists stay
  // whole whatever the program passes. A record still on the chunk is removed and counted.
  bool try_deallocate(void* p, HeapThread& t);

  // Frees a chunk from a thread whose own lists must not be touched (a signal handler that
  // interrupted the heap on its thread, or a thread after retire_thread): straight to the
  // central list, if its lock is free. Returns false, and does nothing, if `p` is not an
  // allocated chunk or the lock is taken.
  bool try_deallocate_remote(void* p);

  // The chunk's usable size (its class's size), or 0 if `p` is not an allocated chunk.
  size_t usable_size(const void* p) const;

  // Records: the same contract as AllocTable's, for chunks of this heap. set_record puts
  // `rec` on the allocated chunk at rec.ptr (false if there is none) with a sequence number
  // (rec.sequence is ignored): larger than the chunk's earlier records' and than the
  // thread's earlier ones, and synchronised across threads every kSequenceSync records, so
  // numbers follow the order of allocation within a thread and roughly across threads. The
  // leak scan takes definitely lost leaders in this order (memcheck's address order follows
  // allocation order in its own allocator, which this heap's size classes do not).
  __attribute__((always_inline)) bool set_record(const AllocRecord& rec, HeapThread& t) {
    // Usually the chunk try_allocate just returned: inline, without locating it again.
    if (~rec.ptr == t.located_chunk_inverted) [[likely]] {
      return write_record(reinterpret_cast<Meta*>(t.located_meta), rec, t);
    }
    return set_record_located(rec, t);
  }
  // Removes the record of the chunk at `ptr`, copying it to *out; the chunk stays allocated.
  // *sequence: the record's sequence number (never 0; see set_record), so a later free of
  // the same address has the larger number.
  bool try_erase(uintptr_t ptr, AllocRecord* /*out*/ out, uint64_t* /*out*/ sequence,
                 HeapThread& t);
  // try_erase and try_deallocate in one step, for a free with nothing to do between the two
  // (no copy of the bytes): one lookup of the chunk, one write of its state. *deallocated
  // says whether the chunk went back too; not on a retired thread, whose frees must go
  // through try_deallocate (to the central list) after this erase.
  bool try_erase_and_deallocate(uintptr_t ptr, AllocRecord* /*out*/ out, uint64_t* /*out*/ sequence,
                                HeapThread& t, bool* /*out*/ deallocated);
  // try_erase_and_deallocate for the sampled mode's lean free (docs/sampling.md): the chunk at
  // `ptr` is freed with its record only if that record has no stack (stack id 0), is of
  // `family` with `aligned` as given (the free call matches it), and was not marked reported,
  // and the thread is not retired; *size is then its size. Otherwise nothing is done and the
  // caller takes the full path.
  bool try_free_unstacked(uintptr_t ptr, AllocFamily family, bool aligned, HeapThread& t,
                          uint64_t* /*out*/ size);
  // The sampled mode's fast path (docs/sampling.md, "Cost"), inlined into the hooks: what
  // try_allocate_recorded and try_free_unstacked do, for the common case only, with no call
  // and nothing but this thread's list touched. Each does its work only if nothing beyond it
  // is due, and otherwise returns nullptr / false with nothing changed: the caller then takes
  // the path it takes without them, which does the rest (a refill, a spill, the sequence
  // numbers' synchronisation, a retired thread's central lists).
  //
  // A chunk for a block of up to kMaxSize bytes at malloc's alignment, recorded with stack
  // id 0, `family`, not aligned, `ignored` and `epoch`.
  __attribute__((always_inline)) void* try_pop_recorded(size_t size, AllocFamily family,
                                                        bool ignored, uint32_t epoch,
                                                        HeapThread& t) {
    size_t c = class_of_size(size);
    HeapThread::List& list = t.lists[c];
    uintptr_t m = list.head;
    HeapCounters* counters = t.counters;  // null on a retired thread
    if (counters == nullptr || t.unsynced + 1 >= kSequenceSync) return nullptr;
    uint64_t chunk_last = 0;  // the chunk's last sequence number (a fresh chunk has none)
    if (m != 0) [[likely]] {
      list.head = reinterpret_cast<Meta*>(m)->data.load(std::memory_order_relaxed);
      --list.count;
      chunk_last =
          reinterpret_cast<Meta*>(m)->info.load(std::memory_order_relaxed) >> kSequenceShift;
    } else if (list.fresh_next < list.fresh_end) {
      // A chunk never used (zero record, written without being read: try_allocate).
      m = list.fresh_next;
      list.fresh_next += sizeof(Meta);
    } else {
      return nullptr;  // a refill
    }
    auto* meta = reinterpret_cast<Meta*>(m);
    // The data before the state, as write_record.
    meta->data.store(size, std::memory_order_relaxed);
    uint64_t sequence = (t.sequence > chunk_last ? t.sequence : chunk_last) + 1;
    t.sequence = sequence;
    ++t.unsynced;
    meta->info.store(sequence << kSequenceShift | kAllocatedBit | kRecordedBit |
                         static_cast<uint64_t>(family) << kFamilyShift |
                         (ignored ? kIgnoredBit : 0) |
                         static_cast<uint64_t>(epoch % kEpochModulus) << kEpochShift,
                     std::memory_order_release);
    add_relaxed(counters->inserted, 1);
    add_relaxed(counters->inserted_bytes, static_cast<int64_t>(size));
    return reinterpret_cast<void*>(chunk_of(c, m));
  }
  // The free of the chunk at `ptr` if its record has no stack, is of `family`, not aligned
  // and not reported, the thread's list of its class has room, and `accept(size)` (the
  // caller's last word, given the block's size) returns true; *size is then its size.
  template <typename Accept>
  __attribute__((always_inline)) bool try_push_unstacked(uintptr_t ptr, AllocFamily family,
                                                         HeapThread& t, uint64_t* /*out*/ size,
                                                         Accept&& accept) {
    size_t c;
    Meta* meta;
    if (!locate(ptr, &c, &meta)) return false;
    uint64_t info = meta->info.load(std::memory_order_relaxed);
    uint64_t data = meta->data.load(std::memory_order_relaxed);
    HeapThread::List& list = t.lists[c];
    HeapCounters* counters = t.counters;  // null on a retired thread
    if ((info & kUnstackedChecked) != unstacked_expected(family, false) ||
        (data >> kSizeBits) != 0 || counters == nullptr ||
        list.count + 1 > 2 * heap_layout::kClasses.batch[c] || !accept(data)) {
      return false;
    }
    *size = data;  // the stack id above it is 0
    add_relaxed(counters->erased, 1);
    add_relaxed(counters->erased_bytes, static_cast<int64_t>(data));
    // The state before the link, as in try_deallocate.
    meta->info.store(info & kSequenceMask, std::memory_order_relaxed);
    meta->data.store(list.head, std::memory_order_release);
    list.head = reinterpret_cast<uintptr_t>(meta);
    ++list.count;
    return true;
  }

  // True if `ptr` is the start of a chunk that is free now and had a record before: freeing
  // it again is a double free, whatever the quarantine remembers.
  bool is_freed_chunk(uintptr_t ptr) const;
  // Puts back a record try_erase just removed, undoing that erase in the totals.
  bool try_restore(const AllocRecord& rec, HeapThread& t);
  bool try_lookup(uintptr_t ptr, AllocRecord* /*out*/ out) const;
  bool try_mark_ignored(uintptr_t ptr);
  // The recorded block whose bytes contain `ptr` (its start included).
  bool try_find_containing(uintptr_t ptr, AllocRecord* /*out*/ out) const;
  // The allocated chunk whose bytes contain `ptr` (its start included), recorded or not, with
  // its size in *size; 0 if there is none (--check-heap=full's blocks lie inside chunks:
  // core/redzone.h).
  uintptr_t allocated_chunk_containing(uintptr_t ptr, size_t* /*out*/ size) const;

  // Calls fn(const AllocRecord&) for every recorded chunk, segment by segment. Not a
  // snapshot while threads run (a chunk being recorded or erased may be missed).
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (size_t c = 0; c < kHeapClasses; ++c) {
      for (const Segment* s = first_segment(c); s != nullptr; s = s->next) {
        uint32_t carved = s->carved.load(std::memory_order_acquire);
        for (uint32_t i = 0; i < carved; ++i) {
          AllocRecord rec;
          if (try_read(c, s, i, &rec, nullptr)) fn(rec);
        }
      }
    }
  }

  // As for_each, in address order: the segments in the order of their addresses (found in
  // the map of segments between the lowest and the highest one made), the chunks of each in
  // theirs. The leak scan's block array then needs no sort (leakcheck/scan_blocks.h).
  template <typename Fn>
  void for_each_in_address_order(Fn&& fn) const {
    if (segment_class_ == nullptr) return;
    uintptr_t last = segments_high_.load(std::memory_order_acquire) >> kSegmentShift;
    for (uintptr_t i = segments_low_.load(std::memory_order_acquire) >> kSegmentShift;
         i <= last && last != 0; ++i) {
      unsigned tag = __atomic_load_n(&segment_class_[i], __ATOMIC_ACQUIRE);
      if (tag == 0) continue;
      const auto* s = reinterpret_cast<const Segment*>(i << kSegmentShift);
      uint32_t carved = s->carved.load(std::memory_order_acquire);
      for (uint32_t j = 0; j < carved; ++j) {
        AllocRecord rec;
        if (try_read(tag - 1, s, j, &rec, nullptr)) fn(rec);
      }
    }
  }

  // As for_each, and sets the reported mark where fn returns true (unless the chunk changed
  // meanwhile: then the mark is not set).
  template <typename Fn>
  void for_each_marking_reported(Fn&& fn) {
    for (size_t c = 0; c < kHeapClasses; ++c) {
      for (const Segment* s = first_segment(c); s != nullptr; s = s->next) {
        uint32_t carved = s->carved.load(std::memory_order_acquire);
        for (uint32_t i = 0; i < carved; ++i) {
          AllocRecord rec;
          uint64_t info = 0;
          if (try_read(c, s, i, &rec, &info) && fn(rec)) {
            s->meta(i).info.compare_exchange_strong(info, info | kReportedBit,
                                                    std::memory_order_relaxed);
          }
        }
      }
    }
  }

  // Records made and removed, and live ones: every thread's counters plus those of threads
  // that have retired.
  AllocTotals totals();
  // Recorded chunks right now (a walk of the records).
  size_t size() const;
  // Bytes of records of the segments made so far (16 per chunk, rounded to pages).
  size_t metadata_bytes() const;
  // Bytes of the segments made so far.
  size_t segment_bytes() const;

  // Gives the memory of every free chunk in the central lists (and the calling thread's, `t`)
  // back to the system, whole pages at a time: malloc_trim. Returns the bytes of the ranges
  // given back (0: none).
  size_t trim(HeapThread& t);
  // How long a free chunk stays unused before its pages go back: long enough that a program
  // which frees and allocates again in rounds keeps its memory (a release costs a page fault
  // per page at the next use), short enough that one whose heap shrank for good gives it back
  // soon. jemalloc's decay works the same way, at 10 s by default.
  static constexpr uint64_t kReleaseDelayNs = 1'000'000'000;
  void test_only_set_release_delay(uint64_t ns) { release_delay_ns_ = ns; }
  // The idle check now, whatever the delay.
  void test_only_check_idle_now() {
    next_release_check_ns_.store(0, std::memory_order_relaxed);
    release_idle_pages();
  }

  // At a thread's exit: its lists and fresh chunks go to the central lists, its counters
  // to the retired totals (and their slot to the next new thread). Later calls with this
  // `t` use the central lists directly. A thread that exits without it loses its cached
  // chunks, never its counts.
  void retire_thread(HeapThread& t);
  // Called (outside the heap's locks) when a thread first changes the heap, so the caller can
  // arrange for retire_thread at its exit. Set before any use.
  void set_thread_registered_callback(void (*callback)(HeapThread& t)) {
    on_registered_ = callback;
  }

  // fork() support, as AllocTable's; in the child the other threads' cached chunks are lost,
  // their counters kept.
  void lock_all();
  void unlock_all();
  void reset_after_fork();

  // Unmaps everything; the heap is off afterwards. Not thread safe.
  void test_only_release();

  // The class serving `size` bytes at `alignment`, or -1. Public for tests and small_heap.cpp.
  static int class_for(size_t size, size_t alignment);
  // class_for(size, 0) for a size of at most kMaxSize (0 is served as 1 byte), inline.
  static size_t class_of_size(size_t size) {
    if (size <= 256) return (size - (size != 0 ? 1 : 0)) >> 4;
    auto k = static_cast<size_t>(63 - __builtin_clzll(size - 1));  // 2^k < size <= 2^(k+1)
    return 16 + (k - 8) * 4 + ((size - 1 - (size_t{1} << k)) >> (k - 2));
  }
  static size_t class_size(size_t c);

 private:
  // A chunk's record. info: bit 0 allocated, 1 recorded, 2-3 family, 4 aligned, 5 ignored,
  // 6 reported, 7-20 epoch; bits 24-63 the allocation's sequence number (kept while the
  // chunk is free: the next record of the chunk gets a larger one). data: size (bits 0-39)
  // and stack id (40-63) while recorded; while free, the next free chunk's record address
  // in its list (0 at the end).
  struct Meta {
    std::atomic<uint64_t> data;
    std::atomic<uint64_t> info;
  };
  static_assert(sizeof(Meta) == heap_layout::kMetaSize);
  static constexpr uint64_t kAllocatedBit = 1;
  static constexpr uint64_t kRecordedBit = 2;
  static constexpr uint64_t kFamilyShift = 2;
  static constexpr uint64_t kAlignedBit = uint64_t{1} << 4;
  static constexpr uint64_t kIgnoredBit = uint64_t{1} << 5;
  static constexpr uint64_t kReportedBit = uint64_t{1} << 6;
  static constexpr uint64_t kEpochShift = 7;
  static constexpr uint64_t kSequenceShift = 24;
  static constexpr uint64_t kSequenceMask = ~uint64_t{0} << kSequenceShift;
  static constexpr uint64_t kSizeBits = 40;

  // The first 64 bytes of a segment; its records follow.
  struct Segment {
    Segment* next;                 // the class's segments, newest first
    std::atomic<uint32_t> carved;  // chunks handed out so far (the rest were never used)
    uint32_t cls;
    uint8_t padding[64 - sizeof(Segment*) - 8];
    Meta& meta(uint32_t i) const {
      return reinterpret_cast<Meta*>(reinterpret_cast<uintptr_t>(this) + sizeof(Segment))[i];
    }
  };
  static_assert(sizeof(Segment) == heap_layout::kHeader);

  struct alignas(64) Central {
    SpinLock lock;
    uintptr_t head = 0;  // record address of the first free chunk; 0: empty
    uint32_t count = 0;  // chunks in the list
    // The central list is last in, first out, so a chunk's place counted from the end stays
    // while it is there: its last `lowest_count` chunks (the lowest count since the last idle
    // check), from the one whose record is `idle_first` on, were not taken since that check,
    // and its last `released` were given back to the system and not taken since.
    uint32_t lowest_count = 0;
    uint32_t released = 0;
    uintptr_t idle_first = 0;
    std::atomic<Segment*> segments{nullptr};  // newest first (its carved part may grow)
    size_t segment_count = 0;
  };

  // 1 + the class of the heap's segment holding address `a`, 0 if none.
  unsigned class_tag(uintptr_t a) const {
    if (uint64_t{a} >= kAddressLimit || segment_class_ == nullptr) return 0;
    return __atomic_load_n(&segment_class_[a >> kSegmentShift], __ATOMIC_RELAXED);
  }
  const Segment* first_segment(size_t c) const {
    return central_[c].segments.load(std::memory_order_acquire);
  }
  static uintptr_t segment_base(uintptr_t address) { return address & ~(kSegmentSize - 1); }
  // The class and record of the chunk starting at `p` (allocated or not); false if there is
  // none. locate_for does the same through the thread's last located chunk.
  __attribute__((always_inline)) bool locate(uintptr_t p, size_t* /*out*/ c,
                                             Meta** /*out*/ meta) const {
    unsigned tag = class_tag(p);
    if (tag == 0) return false;
    size_t cls = tag - 1;
    const heap_layout::ClassTable& classes = heap_layout::kClasses;
    uintptr_t base = segment_base(p);
    uintptr_t offset = p - base - classes.chunk_offset[cls];  // wraps to huge below the chunks
    if (offset >= classes.chunk_bytes[cls]) return false;
    // offset / 16 < 2^17: the product fits in 64 bits.
    auto i = static_cast<uint32_t>(((offset >> 4) * classes.reciprocal[cls]) >> 32);
    if (uintptr_t{i} * classes.size[cls] != offset) return false;
    *c = cls;
    *meta = &reinterpret_cast<const Segment*>(base)->meta(i);
    return true;
  }
  bool locate_for(uintptr_t p, HeapThread& t, size_t* /*out*/ c, Meta** /*out*/ meta) const;
  // The chunk whose record is at `meta`, of class c.
  static uintptr_t chunk_of(size_t c, uintptr_t meta) {
    uintptr_t base = segment_base(meta);
    uintptr_t index = (meta - base - heap_layout::kHeader) / sizeof(Meta);
    return base + heap_layout::kClasses.chunk_offset[c] + index * heap_layout::kClasses.size[c];
  }
  // What a lean free checks of a record's state: recorded (hence allocated), of the free
  // call's family and alignedness, not reported.
  static constexpr uint64_t kUnstackedChecked =
      kRecordedBit | uint64_t{3} << kFamilyShift | kAlignedBit | kReportedBit;
  static constexpr uint64_t unstacked_expected(AllocFamily family, bool aligned) {
    return kRecordedBit | static_cast<uint64_t>(family) << kFamilyShift |
           (aligned ? kAlignedBit : 0);
  }
  // The record of the chunk at `chunk` from its two words, written field by field into *rec
  // (built in a temporary and copied, its narrow stores were read back as 16-byte loads that
  // the CPU could not forward: a stall of 10-20 cycles in every free).
  static void unpack(uintptr_t chunk, uint64_t data, uint64_t info, AllocRecord* /*out*/ rec) {
    rec->ptr = chunk;
    rec->size = data & ((uint64_t{1} << kSizeBits) - 1);
    rec->stack_id = static_cast<uint32_t>(data >> kSizeBits);
    rec->family = static_cast<AllocFamily>((info >> kFamilyShift) & 3);
    rec->aligned = (info & kAlignedBit) != 0 ? 1 : 0;
    rec->ignored = (info & kIgnoredBit) != 0 ? 1 : 0;
    rec->reported = (info & kReportedBit) != 0 ? 1 : 0;
    rec->epoch = static_cast<uint16_t>((info >> kEpochShift) % kEpochModulus);
    rec->sequence = info >> kSequenceShift;
  }
  static uint64_t pack_info(const AllocRecord& rec, uint64_t kept) {
    return (kept & kSequenceMask) | kAllocatedBit | kRecordedBit |
           static_cast<uint64_t>(rec.family) << kFamilyShift |
           (rec.aligned != 0 ? kAlignedBit : 0) | (rec.ignored != 0 ? kIgnoredBit : 0) |
           (rec.reported != 0 ? kReportedBit : 0) |
           static_cast<uint64_t>(rec.epoch % kEpochModulus) << kEpochShift;
  }
  // set_record's work on the chunk whose record is `meta`.
  __attribute__((always_inline)) bool write_record(Meta* meta, const AllocRecord& rec,
                                                   HeapThread& t) {
    // Every field is read before the first store, which the compiler must assume may change
    // `rec`: inlined into a caller that has just filled `rec`, the fields stay in registers.
    uint64_t size = rec.size;
    uint64_t data = size | static_cast<uint64_t>(rec.stack_id) << kSizeBits;
    uint64_t fields = pack_info(rec, 0);
    uint64_t info = meta->info.load(std::memory_order_relaxed);
    if ((info & kAllocatedBit) == 0 || size >= (uint64_t{1} << kSizeBits)) return false;
    meta->data.store(data, std::memory_order_relaxed);
    uint64_t sequence = next_sequence(t, info >> kSequenceShift);
    meta->info.store(fields | sequence << kSequenceShift, std::memory_order_release);
    count_insert(t, 1, static_cast<int64_t>(size));
    return true;
  }
  // set_record of any chunk (out of line: the arithmetic of locate).
  bool set_record_located(const AllocRecord& rec, HeapThread& t);
  // The record of chunk `i` if it has one, read whole while other threads may change it:
  // its state, its data, then its state again (the writers store the state before a free
  // chunk's link, and a record's data before its state). *info_out: the state read.
  bool try_read(size_t c, const Segment* s, uint32_t i, AllocRecord* /*out*/ rec,
                uint64_t* /*out*/ info_out) const {
    const Meta& m = s->meta(i);
    uint64_t info = m.info.load(std::memory_order_acquire);
    if ((info & kRecordedBit) == 0) return false;
    uint64_t data = m.data.load(std::memory_order_acquire);
    if (m.info.load(std::memory_order_relaxed) != info) return false;
    unpack(chunk_of(c, reinterpret_cast<uintptr_t>(&m)), data, info, rec);
    if (info_out != nullptr) *info_out = info;
    return true;
  }

  // Puts the chunk whose record is `meta` (of class c, its state already written free) at
  // the head of the thread's list.
  void push_free(size_t c, Meta* meta, HeapThread& t);
  // try_allocate when the thread's list of class c is empty.
  void* refill_and_allocate(size_t size, size_t alignment, size_t c, HeapThread& t);
  bool refill(size_t c, HeapThread& t);
  Segment* new_segment_locked(size_t c);
  void spill(size_t c, HeapThread& t, uint32_t keep);
  void push_central_locked(size_t c, uintptr_t head, uintptr_t tail, uint32_t count);
  // Gives back the pages that lie wholly within the `n` chunks of the central list of class c
  // from the one whose record is `first` on (sorted by address in parts of up to
  // kReleaseBatch). Returns the bytes of the ranges given back.
  size_t release_chunks_locked(size_t c, uintptr_t first, uint32_t n);
  static constexpr uint32_t kReleaseBatch = 1 << 18;  // 2 MiB of scratch
  // Once per release_delay_ns_, from a thread that spills: every class's chunks that stayed
  // in its central list since the last check go back to the system.
  void release_idle_pages();
  // The calling thread's counters, taken from the registry at its first change to the heap;
  // nullptr if no slot can be mapped (the counts then go to the retired totals).
  HeapCounters* counters_of(HeapThread& t);
  // Only the counters' own thread writes them: a load and a store, no read-modify-write.
  static void add_relaxed(std::atomic<uint64_t>& counter, int64_t delta) {
    counter.store(counter.load(std::memory_order_relaxed) + static_cast<uint64_t>(delta),
                  std::memory_order_relaxed);
  }
  void count_insert(HeapThread& t, int64_t count, int64_t bytes) {
    HeapCounters* counters = t.counters != nullptr ? t.counters : counters_of(t);
    if (counters == nullptr) [[unlikely]] {  // retired, or no slot: shared atomics
      retired_inserted_.fetch_add(static_cast<uint64_t>(count), std::memory_order_relaxed);
      retired_inserted_bytes_.fetch_add(static_cast<uint64_t>(bytes), std::memory_order_relaxed);
      return;
    }
    add_relaxed(counters->inserted, count);
    add_relaxed(counters->inserted_bytes, bytes);
  }
  void count_erase(HeapThread& t, int64_t count, int64_t bytes);
  // Numbers start at 1 (0 is never one: the quarantine's "being written"). 40 bits: 10^12
  // records before they wrap.
  uint64_t next_sequence(HeapThread& t, uint64_t chunk_last) {
    uint64_t next = (t.sequence > chunk_last ? t.sequence : chunk_last) + 1;
    if (++t.unsynced >= kSequenceSync) [[unlikely]] {
      next = synchronise_sequence(t, next);
    }
    t.sequence = next;
    return next;
  }
  uint64_t synchronise_sequence(HeapThread& t, uint64_t next);

  // One byte per 2 MiB of address space below kAddressLimit: 1 + the class of the heap's
  // segment there, 0 if none. Written once per segment (under arena_lock_).
  uint8_t* segment_class_ = nullptr;
  Central central_[kHeapClasses];
  // Segments are carved from 64 MiB reservations, so the runtime's list of its own mappings
  // (never roots of the leak scan) holds one entry per 32 segments.
  SpinLock arena_lock_;
  // The lowest and the highest segment made (0 until the first), for the walk in address
  // order; written under arena_lock_.
  std::atomic<uintptr_t> segments_low_{0};
  std::atomic<uintptr_t> segments_high_{0};
  uintptr_t arena_next_ = 0;
  uintptr_t arena_end_ = 0;
  static constexpr size_t kMaxArenas = 4096;
  uintptr_t arenas_[kMaxArenas] = {};  // for test_only_release
  size_t arena_count_ = 0;
  SpinLock registry_lock_;
  // Counter slots: pages of them, linked, never unmapped (small_heap.cpp, counters_of).
  struct CounterPage;
  CounterPage* counter_pages_ = nullptr;
  HeapCounters* free_counters_ = nullptr;
  void (*on_registered_)(HeapThread& t) = nullptr;
  std::atomic<uint64_t> sequence_{0};  // the highest number a thread has synchronised
  uint64_t release_delay_ns_ = kReleaseDelayNs;
  std::atomic<uint64_t> next_release_check_ns_{0};
  // Counters of retired threads (and of frees made outside any thread's lists).
  std::atomic<uint64_t> retired_inserted_{0};
  std::atomic<uint64_t> retired_inserted_bytes_{0};
  std::atomic<uint64_t> retired_erased_{0};
  std::atomic<uint64_t> retired_erased_bytes_{0};
};

}  // namespace memtrack::core
