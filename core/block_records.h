// The records of every block the program holds, wherever it came from: chunks of memtrack's
// own heap keep their record beside them (small_heap.h); blocks of the system allocator
// (larger ones, over-aligned ones, those made before the heap or while it cannot serve)
// are in the allocation table (alloc_table.h). Which one holds a pointer's record follows
// from the address alone, unless every record is to be in the table (records_in_table: the
// blocks of --check-heap=full lie inside the heap's chunks, not at their starts, and the
// heap's records are keyed by chunk). Runtime-safe: no malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/alloc_table.h"
#include "core/small_heap.h"

namespace memtrack::core {

// Thread safe, as its two parts are. Zero-initialised memory is a valid, empty set of
// records with the heap off. `t` is the calling thread's heap state (only the heap's
// counters use it).
class BlockRecords {
 public:
  SmallHeap& heap() { return heap_; }
  const SmallHeap& heap() const { return heap_; }
  AllocTable& table() { return table_; }

  // From now on every record goes to the table (start-up, before the first block).
  void keep_records_in_table() { records_in_table_ = true; }
  // Whether the record of `ptr` is the heap's.
  bool heap_records(uintptr_t ptr) const {
    return !records_in_table_ && heap_.owns(reinterpret_cast<const void*>(ptr));
  }

  [[nodiscard]] bool try_insert(const AllocRecord& rec, HeapThread& t) {
    return heap_records(rec.ptr) ? heap_.set_record(rec, t) : table_.try_insert(rec);
  }
  [[nodiscard]] bool try_restore(const AllocRecord& rec, HeapThread& t) {
    return heap_records(rec.ptr) ? heap_.try_restore(rec, t) : table_.try_restore(rec);
  }
  // As AllocTable::try_erase; the sequence numbers of the two parts are never compared (a
  // pointer belongs to one of them for the whole run).
  bool try_erase(uintptr_t ptr, AllocRecord* /*out*/ out, uint64_t* /*out*/ sequence,
                 HeapThread& t) {
    return heap_records(ptr) ? heap_.try_erase(ptr, out, sequence, t)
                             : table_.try_erase(ptr, out, sequence);
  }
  // try_erase, and for a chunk of the heap its free in the same step
  // (SmallHeap::try_erase_and_deallocate): *deallocated says whether the block was freed;
  // if not, the caller frees it.
  bool try_erase_and_deallocate(uintptr_t ptr, AllocRecord* /*out*/ out, uint64_t* /*out*/ sequence,
                                HeapThread& t, bool* /*out*/ deallocated) {
    if (heap_records(ptr)) {
      return heap_.try_erase_and_deallocate(ptr, out, sequence, t, deallocated);
    }
    *deallocated = false;
    return table_.try_erase(ptr, out, sequence);
  }
  bool try_lookup(uintptr_t ptr, AllocRecord* /*out*/ out) {
    return heap_records(ptr) ? heap_.try_lookup(ptr, out) : table_.try_lookup(ptr, out);
  }
  bool try_mark_ignored(uintptr_t ptr) {
    return heap_records(ptr) ? heap_.try_mark_ignored(ptr) : table_.try_mark_ignored(ptr);
  }

  // Calls fn(const AllocRecord&) for every record (see AllocTable::for_each and
  // SmallHeap::for_each for what each part promises while threads run).
  template <typename Fn>
  void for_each(Fn&& fn) {
    heap_.for_each(fn);
    table_.for_each(fn);
  }
  // As for_each, the heap's records in address order (SmallHeap::for_each_in_address_order),
  // then the table's in no order.
  template <typename Fn>
  void for_each_heap_in_address_order(Fn&& fn) {
    heap_.for_each_in_address_order(fn);
    table_.for_each(fn);
  }
  template <typename Fn>
  void for_each_marking_reported(Fn&& fn) {
    heap_.for_each_marking_reported(fn);
    table_.for_each_marking_reported(fn);
  }

  AllocTotals totals() {
    AllocTotals a = heap_.totals();
    AllocTotals b = table_.totals();
    return AllocTotals{a.inserted + b.inserted, a.inserted_bytes + b.inserted_bytes,
                       a.erased + b.erased, a.live + b.live, a.live_bytes + b.live_bytes};
  }
  size_t size() { return heap_.size() + table_.size(); }
  // Bytes of memory that hold records: the table's and the heap's metadata arrays.
  size_t mapped_bytes() { return table_.mapped_bytes() + heap_.metadata_bytes(); }

  void lock_all() {
    heap_.lock_all();
    table_.lock_all();
  }
  void unlock_all() {
    table_.unlock_all();
    heap_.unlock_all();
  }
  void reset_after_fork() {
    heap_.reset_after_fork();
    table_.reset_after_fork();
  }
  // The table's records only (an attached runtime uses no heap of its own).
  void clear() { table_.clear(); }

 private:
  SmallHeap heap_;
  bool records_in_table_ = false;
  AllocTable table_;
};

}  // namespace memtrack::core
