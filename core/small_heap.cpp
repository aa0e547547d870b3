// memtrack's own allocator (small_heap.h). Runtime-safe: mmap and mprotect only, no malloc.
#include "core/small_heap.h"

#include <algorithm>

#include "core/metadata_budget.h"
#include "core/sys_linux.h"

namespace memtrack::core {
namespace {

constexpr const heap_layout::ClassTable& kClasses = heap_layout::kClasses;

using heap_layout::round_up;

constexpr size_t kPage = heap_layout::kPage;
constexpr size_t kSegment = SmallHeap::kSegmentSize;

static_assert(kClasses.size[kHeapClasses - 1] == SmallHeap::kMaxSize);
static_assert(kClasses.chunks[kHeapClasses - 1] >= 16, "even 64 KiB chunks fill a segment");

// Segments are carved from reservations of this size.
constexpr size_t kArena = size_t{64} << 20;

}  // namespace

size_t SmallHeap::class_size(size_t c) {
  return kClasses.size[c];
}

int SmallHeap::class_for(size_t size, size_t alignment) {
  if (alignment > kMaxAlignment) return -1;
  if (alignment > 16 && size < alignment) size = alignment;
  if (size > kMaxSize) return -1;
  size_t c = class_of_size(size);
  // A chunk is aligned to every power of two up to a page that divides its class's size:
  // take the first class that is a multiple.
  if (alignment > 16) {
    while (c < kHeapClasses && class_size(c) % alignment != 0) ++c;
    if (c == kHeapClasses) return -1;
  }
  return static_cast<int>(c);
}

bool SmallHeap::try_init() {
  if (sizeof(void*) != 8) return false;  // the layout and its arithmetic are 64-bit
  auto bytes = static_cast<size_t>(kAddressLimit >> kSegmentShift);
  void* map = sys::reserve_pages(bytes);
  if (map == nullptr) return false;
  sys::exclude_from_core_dump(map, bytes);
  segment_class_ = static_cast<uint8_t*>(map);
  return true;
}

__attribute__((always_inline)) inline bool SmallHeap::locate_for(uintptr_t p, HeapThread& t,
                                                                 size_t* c, Meta** meta) const {
  if (~p == t.located_chunk_inverted) {
    *c = t.located_class;
    *meta = reinterpret_cast<Meta*>(t.located_meta);
    return true;
  }
  if (!locate(p, c, meta)) return false;
  t.located_chunk_inverted = ~p;
  t.located_meta = reinterpret_cast<uintptr_t>(*meta);
  t.located_class = *c;
  return true;
}

namespace {

// The class of a chunk of `size` bytes at `alignment` (class_for, its first range without a
// call); false if the heap serves none.
inline bool chunk_class(size_t size, size_t alignment, size_t* c) {
  if (size <= 256 && alignment <= 16) [[likely]] {
    *c = size == 0 ? 0 : (size + 15) / 16 - 1;
    return true;
  }
  int cls = SmallHeap::class_for(size, alignment);
  if (cls < 0) return false;
  *c = static_cast<size_t>(cls);
  return true;
}

}  // namespace

void* SmallHeap::try_allocate(size_t size, size_t alignment, HeapThread& t) {
  if (segment_class_ == nullptr || t.retired) return nullptr;
  size_t c = 0;
  if (!chunk_class(size, alignment, &c)) return nullptr;
  HeapThread::List& list = t.lists[c];
  uintptr_t m;
  if (list.head != 0) [[likely]] {
    m = list.head;
    list.head = reinterpret_cast<Meta*>(m)->data.load(std::memory_order_relaxed);
    --list.count;
    Meta& meta = *reinterpret_cast<Meta*>(m);
    uint64_t info = meta.info.load(std::memory_order_relaxed);
    meta.info.store((info & kSequenceMask) | kAllocatedBit, std::memory_order_relaxed);
  } else if (list.fresh_next < list.fresh_end) {
    // A chunk never used: its record is zero (refill), and is written without being read
    // first, so its page faults in once (a read would map the zero page, then the write
    // would fault again to copy it).
    m = list.fresh_next;
    list.fresh_next += sizeof(Meta);
    reinterpret_cast<Meta*>(m)->info.store(kAllocatedBit, std::memory_order_relaxed);
  } else {
    return refill_and_allocate(size, alignment, c, t);
  }
  uintptr_t chunk = chunk_of(c, m);
  t.located_chunk_inverted = ~chunk;  // for the set_record that follows
  t.located_meta = m;
  t.located_class = c;
  return reinterpret_cast<void*>(chunk);
}

void* SmallHeap::try_allocate_recorded(size_t size, size_t alignment, const AllocRecord& rec,
                                       HeapThread& t) {
  if (segment_class_ != nullptr && !t.retired) [[likely]] {
    size_t c = 0;
    if (!chunk_class(size, alignment, &c)) return nullptr;
    HeapThread::List& list = t.lists[c];
    uintptr_t m = list.head;
    uint64_t chunk_last = 0;  // the chunk's last sequence number (a fresh chunk has none)
    if (m != 0) [[likely]] {
      list.head = reinterpret_cast<Meta*>(m)->data.load(std::memory_order_relaxed);
      --list.count;
      chunk_last =
          reinterpret_cast<Meta*>(m)->info.load(std::memory_order_relaxed) >> kSequenceShift;
    } else if (list.fresh_next < list.fresh_end) {
      m = list.fresh_next;
      list.fresh_next += sizeof(Meta);
    }
    if (m != 0) [[likely]] {
      // The data before the state, as write_record: a reader that sees the chunk recorded
      // sees its size.
      Meta* meta = reinterpret_cast<Meta*>(m);
      meta->data.store(size | static_cast<uint64_t>(rec.stack_id) << kSizeBits,
                       std::memory_order_relaxed);
      uint64_t sequence = next_sequence(t, chunk_last);
      meta->info.store(pack_info(rec, 0) | sequence << kSequenceShift, std::memory_order_release);
      count_insert(t, 1, static_cast<int64_t>(size));
      return reinterpret_cast<void*>(chunk_of(c, m));
    }
  }
  // A list to refill (or a retired thread, which try_allocate refuses): the two steps.
  void* p = try_allocate(size, alignment, t);
  if (p == nullptr) return nullptr;
  AllocRecord located = rec;
  located.ptr = reinterpret_cast<uintptr_t>(p);
  located.size = size;
  if (!set_record(located, t)) [[unlikely]] {  // cannot happen: the chunk was just allocated
    try_deallocate(p, t);
    return nullptr;
  }
  return p;
}

// Out of line, so the path of a chunk from the lists saves no registers for it.
__attribute__((noinline)) void* SmallHeap::refill_and_allocate(size_t size, size_t alignment,
                                                               size_t c, HeapThread& t) {
  // refill may map memory (a segment, the thread's counters), and a failed mmap is not the
  // program's error: errno is kept here, off the path of a chunk from the lists.
  int saved_errno = sys::get_errno();
  bool refilled = refill(c, t);
  sys::set_errno(saved_errno);
  return refilled ? try_allocate(size, alignment, t) : nullptr;
}

// Takes a batch from the central list, or carves fresh chunks from the class's newest
// segment (a new one when it is used up). The thread's counters are taken first, so its
// exit hook is set before it holds chunks.
bool SmallHeap::refill(size_t c, HeapThread& t) {
  counters_of(t);
  Central& central = central_[c];
  uint32_t batch = kClasses.batch[c];
  HeapThread::List& list = t.lists[c];
  SpinLockGuard guard(central.lock);
  if (central.count != 0) {
    uint32_t taken = central.count < batch ? central.count : batch;
    uintptr_t head = central.head;
    uintptr_t last = head;
    for (uint32_t i = 1; i < taken; ++i) {
      last = reinterpret_cast<Meta*>(last)->data.load(std::memory_order_relaxed);
    }
    Meta& last_meta = *reinterpret_cast<Meta*>(last);
    central.head = last_meta.data.load(std::memory_order_relaxed);
    central.count -= taken;
    if (central.count < central.lowest_count) {
      central.lowest_count = central.count;
      central.idle_first = central.head;
    }
    if (central.count < central.released) central.released = central.count;
    last_meta.data.store(list.head, std::memory_order_relaxed);
    list.head = head;
    list.count += taken;
    return true;
  }
  Segment* segment = central.segments.load(std::memory_order_relaxed);
  if (segment == nullptr || segment->carved.load(std::memory_order_relaxed) == kClasses.chunks[c]) {
    segment = new_segment_locked(c);
    if (segment == nullptr) return false;
  }
  uint32_t carved = segment->carved.load(std::memory_order_relaxed);
  uint32_t chunks = kClasses.chunks[c];
  uint32_t take = chunks - carved < batch ? chunks - carved : batch;
  list.fresh_next = reinterpret_cast<uintptr_t>(&segment->meta(carved));
  list.fresh_end = list.fresh_next + take * sizeof(Meta);
  // Release: a walk that reads the new count finds the records initialised (zero).
  segment->carved.store(carved + take, std::memory_order_release);
  return true;
}

// A new segment for class c, from the current reservation or a new one. Its records are
// charged against max_metadata_mb like the allocation table's: past the cap the heap makes
// no new segments (blocks then go to the system allocator, and to the table if it has room).
SmallHeap::Segment* SmallHeap::new_segment_locked(size_t c) {
  size_t meta_bytes = kClasses.chunk_offset[c];
  if (!try_charge_metadata(meta_bytes)) return nullptr;
  uintptr_t at = 0;
  {
    SpinLockGuard guard(arena_lock_);
    if (arena_next_ == arena_end_) {
      void* arena = sys::reserve_address_space(kArena, kSegment);
      if (arena == nullptr) return nullptr;
      arena_next_ = reinterpret_cast<uintptr_t>(arena);
      arena_end_ = arena_next_ + kArena;
      if (arena_count_ < kMaxArenas) arenas_[arena_count_++] = arena_next_;
    }
    at = arena_next_;
    if (!sys::commit_pages(reinterpret_cast<void*>(at), kSegment)) return nullptr;
    arena_next_ += kSegment;
    uintptr_t low = segments_low_.load(std::memory_order_relaxed);
    if (low == 0 || at < low) segments_low_.store(at, std::memory_order_release);
    if (at > segments_high_.load(std::memory_order_relaxed)) {
      segments_high_.store(at, std::memory_order_release);
    }
  }
  auto* segment = reinterpret_cast<Segment*>(at);
  segment->cls = static_cast<uint32_t>(c);
  Central& central = central_[c];
  segment->next = central.segments.load(std::memory_order_relaxed);
  ++central.segment_count;
  // The class byte before the segment is published: a pointer into it reaches a free only
  // after its chunk was handed out, which is after both.
  __atomic_store_n(&segment_class_[at >> kSegmentShift], static_cast<uint8_t>(c + 1),
                   __ATOMIC_RELEASE);
  central.segments.store(segment, std::memory_order_release);
  return segment;
}

void SmallHeap::push_central_locked(size_t c, uintptr_t head, uintptr_t tail, uint32_t count) {
  Central& central = central_[c];
  reinterpret_cast<Meta*>(tail)->data.store(central.head, std::memory_order_release);
  central.head = head;
  central.count += count;
}

// Moves all but `keep` chunks of the thread's list to the central list. The list's first
// `keep` chunks stay (the most recently freed, whose lines are likely cached).
void SmallHeap::spill(size_t c, HeapThread& t, uint32_t keep) {
  HeapThread::List& list = t.lists[c];
  if (list.count <= keep) return;
  uint32_t moved = list.count - keep;
  uintptr_t kept_last = 0;  // record of the last chunk kept
  uintptr_t head = list.head;
  for (uint32_t i = 0; i < keep; ++i) {
    kept_last = head;
    head = reinterpret_cast<Meta*>(head)->data.load(std::memory_order_relaxed);
  }
  uintptr_t tail = head;
  for (uint32_t i = 1; i < moved; ++i) {
    tail = reinterpret_cast<Meta*>(tail)->data.load(std::memory_order_relaxed);
  }
  if (kept_last != 0) {
    reinterpret_cast<Meta*>(kept_last)->data.store(0, std::memory_order_relaxed);
  } else {
    list.head = 0;
  }
  list.count = keep;
  {
    SpinLockGuard guard(central_[c].lock);
    push_central_locked(c, head, tail, moved);
  }
  release_idle_pages();
}

// The chunks sorted by address, so runs of neighbouring free chunks show: a page inside such
// a run holds no allocated byte. The list's links are in the records, never in the pages
// given back; a chunk given back reads as zero when next used. A page across two sorted
// parts stays.
size_t SmallHeap::release_chunks_locked(size_t c, uintptr_t first, uint32_t n) {
  if (n == 0 || first == 0) return 0;
  uint32_t batch = n < kReleaseBatch ? n : kReleaseBatch;
  size_t scratch_bytes = size_t{batch} * sizeof(uintptr_t);
  auto* records = static_cast<uintptr_t*>(sys::map_pages(scratch_bytes));
  if (records == nullptr) return 0;  // the memory stays with the heap, as before
  size_t size = kClasses.size[c];
  size_t released = 0;
  uintptr_t m = first;
  for (uint32_t left = n; left > 0 && m != 0;) {
    size_t k = 0;
    for (; m != 0 && k < batch && k < left;
         m = reinterpret_cast<Meta*>(m)->data.load(std::memory_order_relaxed)) {
      records[k++] = m;
    }
    left -= static_cast<uint32_t>(k);
    // Records lie in chunk order, and the records of two segments never touch.
    std::sort(records, records + k);
    for (size_t i = 0; i < k;) {
      size_t j = i + 1;
      while (j < k && records[j] == records[j - 1] + sizeof(Meta)) ++j;
      uintptr_t from = round_up(chunk_of(c, records[i]), kPage);
      uintptr_t to = (chunk_of(c, records[j - 1]) + size) & ~(uintptr_t{kPage} - 1);
      if (to > from && sys::release_pages(reinterpret_cast<void*>(from), to - from)) {
        released += to - from;
      }
      i = j;
    }
  }
  sys::unmap_pages(records, scratch_bytes);
  return released;
}

// The chunks that became idle since the last check lie from idle_first up to the ones given
// back before: the work is the number of chunks given back, never the list's length.
void SmallHeap::release_idle_pages() {
  uint64_t now = sys::monotonic_ns();
  uint64_t due = next_release_check_ns_.load(std::memory_order_relaxed);
  if (now < due || !next_release_check_ns_.compare_exchange_strong(due, now + release_delay_ns_,
                                                                   std::memory_order_relaxed)) {
    return;  // not yet, or another thread does it
  }
  int saved_errno = sys::get_errno();  // free() leaves errno alone, even if mmap fails here
  for (size_t c = 0; c < kHeapClasses; ++c) {
    Central& central = central_[c];
    if (!central.lock.try_lock()) continue;  // busy: next time
    if (central.lowest_count > central.released) {
      release_chunks_locked(c, central.idle_first, central.lowest_count - central.released);
      central.released = central.lowest_count;
    }
    central.lowest_count = central.count;
    central.idle_first = central.head;
    central.lock.unlock();
  }
  sys::set_errno(saved_errno);
}

size_t SmallHeap::trim(HeapThread& t) {
  if (segment_class_ == nullptr) return 0;
  size_t released = 0;
  for (size_t c = 0; c < kHeapClasses; ++c) {
    if (!t.retired) spill(c, t, 0);  // the caller's own cached chunks too
    Central& central = central_[c];
    SpinLockGuard guard(central.lock);
    released += release_chunks_locked(c, central.head, central.count);
    central.released = central.count;
  }
  return released;
}

// A page of counter slots, mapped when every slot is taken and never unmapped.
struct SmallHeap::CounterPage {
  static constexpr size_t kSlots = 63;
  HeapCounters slots[kSlots];
  CounterPage* next;
};

HeapCounters* SmallHeap::counters_of(HeapThread& t) {
  if (t.counters != nullptr || t.retired) return t.counters;
  {
    SpinLockGuard guard(registry_lock_);
    if (free_counters_ == nullptr) {
      auto* page = static_cast<CounterPage*>(sys::map_pages(sizeof(CounterPage)));
      if (page == nullptr) return nullptr;
      for (size_t i = CounterPage::kSlots; i > 0; --i) {
        page->slots[i - 1].next_free = free_counters_;
        free_counters_ = &page->slots[i - 1];
      }
      page->next = counter_pages_;
      counter_pages_ = page;
    }
    t.counters = free_counters_;
    free_counters_ = t.counters->next_free;
  }
  if (on_registered_ != nullptr) on_registered_(t);
  return t.counters;
}

uint64_t SmallHeap::synchronise_sequence(HeapThread& t, uint64_t next) {
  t.unsynced = 0;
  uint64_t shared = sequence_.load(std::memory_order_relaxed);
  while (shared < next &&
         !sequence_.compare_exchange_weak(shared, next, std::memory_order_relaxed)) {
  }
  return shared > next ? shared + 1 : next;
}

__attribute__((always_inline)) inline void SmallHeap::count_erase(HeapThread& t, int64_t count,
                                                                  int64_t bytes) {
  HeapCounters* counters = t.counters != nullptr ? t.counters : counters_of(t);
  if (counters == nullptr) [[unlikely]] {
    retired_erased_.fetch_add(static_cast<uint64_t>(count), std::memory_order_relaxed);
    retired_erased_bytes_.fetch_add(static_cast<uint64_t>(bytes), std::memory_order_relaxed);
    return;
  }
  add_relaxed(counters->erased, count);
  add_relaxed(counters->erased_bytes, bytes);
}

__attribute__((always_inline)) inline void SmallHeap::push_free(size_t c, Meta* meta,
                                                                HeapThread& t) {
  HeapThread::List& list = t.lists[c];
  meta->data.store(list.head, std::memory_order_release);
  list.head = reinterpret_cast<uintptr_t>(meta);
  if (++list.count > 2 * kClasses.batch[c]) spill(c, t, kClasses.batch[c]);
}

bool SmallHeap::try_deallocate(void* p, HeapThread& t) {
  if (t.retired) return try_deallocate_remote(p);
  size_t c;
  Meta* meta;
  if (!locate_for(reinterpret_cast<uintptr_t>(p), t, &c, &meta)) return false;
  uint64_t info = meta->info.load(std::memory_order_relaxed);
  if ((info & kAllocatedBit) == 0) return false;
  if ((info & kRecordedBit) != 0) {
    auto size = static_cast<int64_t>(meta->data.load(std::memory_order_relaxed) &
                                     ((uint64_t{1} << kSizeBits) - 1));
    count_erase(t, 1, size);
  }
  // The link is written after the state (see try_read): a reader that sees the link also
  // sees the chunk free.
  meta->info.store(info & kSequenceMask, std::memory_order_relaxed);
  push_free(c, meta, t);
  return true;
}

bool SmallHeap::try_deallocate_remote(void* p) {
  size_t c;
  Meta* meta;
  if (!locate(reinterpret_cast<uintptr_t>(p), &c, &meta)) return false;
  Central& central = central_[c];
  if (!central.lock.try_lock()) return false;
  uint64_t info = meta->info.load(std::memory_order_relaxed);
  bool allocated = (info & kAllocatedBit) != 0;
  if (allocated) {
    if ((info & kRecordedBit) != 0) {
      // Not this thread's counters: it may be interrupted in the middle of updating them.
      retired_erased_.fetch_add(1, std::memory_order_relaxed);
      retired_erased_bytes_.fetch_add(
          meta->data.load(std::memory_order_relaxed) & ((uint64_t{1} << kSizeBits) - 1),
          std::memory_order_relaxed);
    }
    meta->info.store(info & kSequenceMask, std::memory_order_relaxed);
    auto m = reinterpret_cast<uintptr_t>(meta);
    push_central_locked(c, m, m, 1);
  }
  central.lock.unlock();
  return allocated;
}

size_t SmallHeap::usable_size(const void* p) const {
  size_t c;
  Meta* meta;
  if (!locate(reinterpret_cast<uintptr_t>(p), &c, &meta)) return 0;
  uint64_t info = meta->info.load(std::memory_order_relaxed);
  return (info & kAllocatedBit) != 0 ? class_size(c) : 0;
}

bool SmallHeap::set_record_located(const AllocRecord& rec, HeapThread& t) {
  size_t c;
  Meta* meta;
  if (!locate_for(rec.ptr, t, &c, &meta)) return false;
  return write_record(meta, rec, t);
}

bool SmallHeap::try_erase(uintptr_t ptr, AllocRecord* out, uint64_t* sequence, HeapThread& t) {
  size_t c;
  Meta* meta;
  if (!locate_for(ptr, t, &c, &meta)) return false;
  uint64_t info = meta->info.load(std::memory_order_relaxed);
  if ((info & kRecordedBit) == 0) return false;
  unpack(ptr, meta->data.load(std::memory_order_relaxed), info, out);
  meta->info.store(info & (kSequenceMask | kAllocatedBit), std::memory_order_relaxed);
  if (sequence != nullptr) *sequence = out->sequence;
  count_erase(t, 1, static_cast<int64_t>(out->size));
  return true;
}

bool SmallHeap::try_erase_and_deallocate(uintptr_t ptr, AllocRecord* out, uint64_t* sequence,
                                         HeapThread& t, bool* deallocated) {
  *deallocated = false;
  size_t c;
  Meta* meta;
  if (!locate_for(ptr, t, &c, &meta)) return false;
  uint64_t info = meta->info.load(std::memory_order_relaxed);
  if ((info & kRecordedBit) == 0) return false;  // recorded implies allocated (pack_info)
  unpack(ptr, meta->data.load(std::memory_order_relaxed), info, out);
  if (sequence != nullptr) *sequence = out->sequence;
  count_erase(t, 1, static_cast<int64_t>(out->size));
  if (t.retired) {
    meta->info.store(info & (kSequenceMask | kAllocatedBit), std::memory_order_relaxed);
    return true;
  }
  // The state before the link, as in try_deallocate.
  meta->info.store(info & kSequenceMask, std::memory_order_relaxed);
  push_free(c, meta, t);
  *deallocated = true;
  return true;
}

bool SmallHeap::try_free_unstacked(uintptr_t ptr, AllocFamily family, bool aligned, HeapThread& t,
                                   uint64_t* size) {
  size_t c;
  Meta* meta;
  if (!locate(ptr, &c, &meta)) return false;
  uint64_t info = meta->info.load(std::memory_order_relaxed);
  uint64_t data = meta->data.load(std::memory_order_relaxed);
  if ((info & kUnstackedChecked) != unstacked_expected(family, aligned) ||
      (data >> kSizeBits) != 0 || t.retired) {
    return false;
  }
  *size = data;  // the size: the stack id above it is 0
  count_erase(t, 1, static_cast<int64_t>(data));
  // The state before the link, as in try_deallocate.
  meta->info.store(info & kSequenceMask, std::memory_order_relaxed);
  push_free(c, meta, t);
  return true;
}

bool SmallHeap::is_freed_chunk(uintptr_t ptr) const {
  size_t c;
  Meta* meta;
  if (!locate(ptr, &c, &meta)) return false;
  uint64_t info = meta->info.load(std::memory_order_acquire);
  return (info & kAllocatedBit) == 0 && (info & kSequenceMask) != 0;
}

bool SmallHeap::try_restore(const AllocRecord& rec, HeapThread& t) {
  if (!set_record(rec, t)) return false;
  // Undo the erase in the totals rather than count a new record.
  auto size = static_cast<int64_t>(rec.size);
  count_insert(t, -1, -size);
  count_erase(t, -1, -size);
  return true;
}

bool SmallHeap::try_lookup(uintptr_t ptr, AllocRecord* out) const {
  size_t c;
  Meta* meta;
  if (!locate(ptr, &c, &meta)) return false;
  uint64_t info = meta->info.load(std::memory_order_acquire);
  if ((info & kRecordedBit) == 0) return false;
  unpack(ptr, meta->data.load(std::memory_order_relaxed), info, out);
  return true;
}

bool SmallHeap::try_mark_ignored(uintptr_t ptr) {
  size_t c;
  Meta* meta;
  if (!locate(ptr, &c, &meta)) return false;
  uint64_t info = meta->info.load(std::memory_order_relaxed);
  while ((info & kRecordedBit) != 0) {
    if (meta->info.compare_exchange_weak(info, info | kIgnoredBit, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

bool SmallHeap::try_find_containing(uintptr_t ptr, AllocRecord* out) const {
  unsigned tag = class_tag(ptr);
  if (tag == 0) return false;
  size_t c = tag - 1;
  uintptr_t base = segment_base(ptr);
  uintptr_t offset = ptr - base - kClasses.chunk_offset[c];
  if (offset >= kClasses.chunk_bytes[c]) return false;
  auto i = static_cast<uint32_t>(offset / kClasses.size[c]);
  const Segment* segment = reinterpret_cast<const Segment*>(base);
  if (i >= segment->carved.load(std::memory_order_acquire)) return false;
  AllocRecord rec;
  if (!try_read(c, segment, i, &rec, nullptr)) return false;
  uint64_t extent = rec.size == 0 ? 1 : rec.size;
  if (ptr - rec.ptr >= extent) return false;
  *out = rec;
  return true;
}

uintptr_t SmallHeap::allocated_chunk_containing(uintptr_t ptr, size_t* size) const {
  unsigned tag = class_tag(ptr);
  if (tag == 0) return 0;
  size_t c = tag - 1;
  uintptr_t base = segment_base(ptr);
  uintptr_t offset = ptr - base - kClasses.chunk_offset[c];
  if (offset >= kClasses.chunk_bytes[c]) return 0;
  auto i = static_cast<uint32_t>(offset / kClasses.size[c]);
  const Segment* segment = reinterpret_cast<const Segment*>(base);
  if (i >= segment->carved.load(std::memory_order_acquire)) return 0;
  if ((segment->meta(i).info.load(std::memory_order_acquire) & kAllocatedBit) == 0) return 0;
  *size = kClasses.size[c];
  return base + kClasses.chunk_offset[c] + uintptr_t{i} * kClasses.size[c];
}

AllocTotals SmallHeap::totals() {
  AllocTotals totals;
  SpinLockGuard guard(registry_lock_);
  uint64_t inserted = retired_inserted_.load(std::memory_order_relaxed);
  uint64_t inserted_bytes = retired_inserted_bytes_.load(std::memory_order_relaxed);
  uint64_t erased = retired_erased_.load(std::memory_order_relaxed);
  uint64_t erased_bytes = retired_erased_bytes_.load(std::memory_order_relaxed);
  // Every slot: a free one was emptied when its thread retired.
  for (const CounterPage* page = counter_pages_; page != nullptr; page = page->next) {
    for (const HeapCounters& c : page->slots) {
      inserted += c.inserted.load(std::memory_order_relaxed);
      inserted_bytes += c.inserted_bytes.load(std::memory_order_relaxed);
      erased += c.erased.load(std::memory_order_relaxed);
      erased_bytes += c.erased_bytes.load(std::memory_order_relaxed);
    }
  }
  totals.inserted = inserted;
  totals.inserted_bytes = inserted_bytes;
  totals.erased = erased;
  totals.live = inserted - erased;
  totals.live_bytes = inserted_bytes - erased_bytes;
  return totals;
}

size_t SmallHeap::size() const {
  size_t n = 0;
  for_each([&](const AllocRecord&) { ++n; });
  return n;
}

size_t SmallHeap::metadata_bytes() const {
  size_t bytes = 0;
  for (size_t c = 0; c < kHeapClasses; ++c)
    bytes += central_[c].segment_count * kClasses.chunk_offset[c];
  return bytes;
}

size_t SmallHeap::segment_bytes() const {
  size_t bytes = 0;
  for (const Central& central : central_) bytes += central.segment_count * kSegment;
  return bytes;
}

void SmallHeap::retire_thread(HeapThread& t) {
  if (t.retired) return;
  for (size_t c = 0; c < kHeapClasses && segment_class_ != nullptr; ++c) {
    HeapThread::List& list = t.lists[c];
    // The fresh chunks join the list first, so one splice moves everything.
    for (uintptr_t m = list.fresh_end; m > list.fresh_next;) {
      m -= sizeof(Meta);
      reinterpret_cast<Meta*>(m)->data.store(list.head, std::memory_order_relaxed);
      list.head = m;
      ++list.count;
    }
    list.fresh_next = list.fresh_end = 0;
    spill(c, t, 0);
  }
  t.retired = true;
  HeapCounters* counters = t.counters;
  t.counters = nullptr;
  if (counters == nullptr) return;
  SpinLockGuard guard(registry_lock_);
  retired_inserted_.fetch_add(counters->inserted.load(std::memory_order_relaxed),
                              std::memory_order_relaxed);
  retired_inserted_bytes_.fetch_add(counters->inserted_bytes.load(std::memory_order_relaxed),
                                    std::memory_order_relaxed);
  retired_erased_.fetch_add(counters->erased.load(std::memory_order_relaxed),
                            std::memory_order_relaxed);
  retired_erased_bytes_.fetch_add(counters->erased_bytes.load(std::memory_order_relaxed),
                                  std::memory_order_relaxed);
  counters->inserted.store(0, std::memory_order_relaxed);
  counters->inserted_bytes.store(0, std::memory_order_relaxed);
  counters->erased.store(0, std::memory_order_relaxed);
  counters->erased_bytes.store(0, std::memory_order_relaxed);
  counters->next_free = free_counters_;
  free_counters_ = counters;
}

void SmallHeap::test_only_release() {
  for (size_t i = 0; i < arena_count_; ++i) {
    sys::unmap_pages(reinterpret_cast<void*>(arenas_[i]), kArena);
  }
  if (segment_class_ != nullptr) {
    sys::unmap_pages(segment_class_, static_cast<size_t>(kAddressLimit >> kSegmentShift));
  }
  segment_class_ = nullptr;
  arena_count_ = 0;
  arena_next_ = arena_end_ = 0;
  for (Central& central : central_) {
    central.head = 0;
    central.count = 0;
    central.lowest_count = central.released = 0;
    central.idle_first = 0;
    central.segments.store(nullptr, std::memory_order_relaxed);
    central.segment_count = 0;
  }
  // The counter pages are kept (tests reuse none of them: a new heap starts with none).
  counter_pages_ = nullptr;
  free_counters_ = nullptr;
  retired_inserted_ = retired_inserted_bytes_ = retired_erased_ = retired_erased_bytes_ = 0;
}

void SmallHeap::lock_all() {
  registry_lock_.lock();
  for (Central& central : central_) central.lock.lock();
  arena_lock_.lock();
}

void SmallHeap::unlock_all() {
  arena_lock_.unlock();
  for (Central& central : central_) central.lock.unlock();
  registry_lock_.unlock();
}

void SmallHeap::reset_after_fork() {
  // The other threads do not exist in the child: their cached chunks are lost, their
  // counter slots stay taken (and counted).
  arena_lock_.reset_after_fork();
  for (Central& central : central_) central.lock.reset_after_fork();
  registry_lock_.reset_after_fork();
}

}  // namespace memtrack::core
