// Tests of memtrack's own allocator (core/small_heap.h): classes, chunks, records, the
// per-thread lists and the central ones, totals, and what it refuses.
#include "core/small_heap.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace memtrack::core {
namespace {

struct HeapDeleter {
  void operator()(SmallHeap* heap) const {
    heap->test_only_release();
    delete heap;
  }
};
using HeapPtr = std::unique_ptr<SmallHeap, HeapDeleter>;

// Released at the end of each test.
HeapPtr new_heap() {
  HeapPtr heap(new SmallHeap());
  EXPECT_TRUE(heap->try_init());
  return heap;
}

AllocRecord record_of(void* p, uint64_t size, uint32_t stack_id) {
  AllocRecord rec;
  rec.ptr = reinterpret_cast<uintptr_t>(p);
  rec.size = size;
  rec.stack_id = stack_id;
  return rec;
}

TEST(SmallHeapTest, ClassesCoverEverySizeWithAtMostAQuarterWasted) {
  EXPECT_EQ(SmallHeap::class_size(0), 16u);
  EXPECT_EQ(SmallHeap::class_size(15), 256u);
  EXPECT_EQ(SmallHeap::class_size(16), 320u);
  EXPECT_EQ(SmallHeap::class_size(kHeapClasses - 1), SmallHeap::kMaxSize);
  for (size_t size = 0; size <= SmallHeap::kMaxSize; size += size < 1024 ? 1 : 7) {
    int c = SmallHeap::class_for(size, 0);
    ASSERT_GE(c, 0) << size;
    size_t chunk = SmallHeap::class_size(static_cast<size_t>(c));
    ASSERT_GE(chunk, size) << size;
    if (c > 0) {
      ASSERT_LT(SmallHeap::class_size(static_cast<size_t>(c) - 1), size) << size;
    }
    if (size > 256) {
      ASSERT_LE(chunk - size, chunk / 4) << size;
    }
  }
  EXPECT_EQ(SmallHeap::class_for(SmallHeap::kMaxSize + 1, 0), -1);
}

TEST(SmallHeapTest, AlignedClassesAreMultiplesOfTheAlignment) {
  for (size_t alignment = 32; alignment <= SmallHeap::kMaxAlignment; alignment *= 2) {
    for (size_t size : {size_t{1}, alignment - 1, alignment, alignment + 1, 3 * alignment}) {
      int c = SmallHeap::class_for(size, alignment);
      ASSERT_GE(c, 0) << size << " at " << alignment;
      size_t chunk = SmallHeap::class_size(static_cast<size_t>(c));
      EXPECT_EQ(chunk % alignment, 0u) << size << " at " << alignment;
      EXPECT_GE(chunk, size);
    }
  }
  EXPECT_EQ(SmallHeap::class_for(16, 8192), -1);
}

TEST(SmallHeapTest, AnUninitialisedHeapOwnsNothingAndServesNothing) {
  SmallHeap heap;
  HeapThread t{};
  int local = 0;
  EXPECT_FALSE(heap.enabled());
  EXPECT_FALSE(heap.owns(&local));
  EXPECT_FALSE(heap.owns(nullptr));
  EXPECT_EQ(heap.try_allocate(16, 0, t), nullptr);
}

TEST(SmallHeapTest, ChunksAreDistinctAlignedWritableAndReused) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  std::set<uintptr_t> seen;
  std::vector<void*> blocks;
  for (size_t size : {0, 1, 16, 17, 100, 256, 257, 1000, 4096, 65536}) {
    for (int i = 0; i < 100; ++i) {
      void* p = heap->try_allocate(size, 0, t);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(heap->owns(p));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
      EXPECT_TRUE(seen.insert(reinterpret_cast<uintptr_t>(p)).second);
      EXPECT_GE(heap->usable_size(p), size);
      std::memset(p, 0xab, size);
      blocks.push_back(p);
    }
  }
  for (void* p : blocks) EXPECT_TRUE(heap->try_deallocate(p, t));
  // Freed chunks come back (the thread's own list first).
  void* again = heap->try_allocate(100, 0, t);
  EXPECT_TRUE(seen.count(reinterpret_cast<uintptr_t>(again)));
}

// A record is written without being read first when its chunk is new: a read would map the
// zero page, and the write would fault again to copy it (two faults per page of records).
TEST(SmallHeapTest, NewChunksFaultTheirRecordsPagesInOnce) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  ASSERT_NE(heap->try_allocate(16, 0, t), nullptr);  // the segment and the thread's counters
  constexpr long kBlocks = 60000;                    // 16-byte records: 234 pages of them
  rusage before{};
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &before), 0);
  for (long i = 0; i < kBlocks; ++i) ASSERT_NE(heap->try_allocate(16, 0, t), nullptr);
  rusage after{};
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &after), 0);
  long record_pages = kBlocks * 16 / 4096;
  EXPECT_LE(after.ru_minflt - before.ru_minflt, record_pages + record_pages / 4);
}

TEST(SmallHeapTest, AlignedChunksAreAligned) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  for (size_t alignment = 32; alignment <= 4096; alignment *= 2) {
    for (int i = 0; i < 10; ++i) {
      void* p = heap->try_allocate(24, alignment, t);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u) << alignment;
    }
  }
}

TEST(SmallHeapTest, RefusesWhatIsNotAnAllocatedChunkStart) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  auto* p = static_cast<char*>(heap->try_allocate(64, 0, t));
  ASSERT_NE(p, nullptr);
  int local = 0;
  EXPECT_FALSE(heap->try_deallocate(&local, t));         // not the heap's
  EXPECT_FALSE(heap->try_deallocate(p + 16, t));         // inside a chunk
  EXPECT_FALSE(heap->try_deallocate(p + 4096, t));       // a chunk never handed out
  EXPECT_FALSE(heap->try_deallocate(p + (1 << 25), t));  // beyond the segments
  EXPECT_EQ(heap->usable_size(p + 16), 0u);
  EXPECT_TRUE(heap->try_deallocate(p, t));
  EXPECT_FALSE(heap->try_deallocate(p, t));  // twice: the list stays whole
  EXPECT_EQ(heap->usable_size(p), 0u);
}

TEST(SmallHeapTest, RecordsAreSetReadMarkedAndErased) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  void* p = heap->try_allocate(40, 0, t);
  AllocRecord rec = record_of(p, 40, 77);
  rec.family = AllocFamily::kNewArray;
  rec.aligned = 1;
  rec.epoch = 123;
  ASSERT_TRUE(heap->set_record(rec, t));
  AllocRecord out;
  ASSERT_TRUE(heap->try_lookup(rec.ptr, &out));
  EXPECT_EQ(out.ptr, rec.ptr);
  EXPECT_EQ(out.size, 40u);
  EXPECT_EQ(out.stack_id, 77u);
  EXPECT_EQ(out.family, AllocFamily::kNewArray);
  EXPECT_EQ(out.aligned, 1);
  EXPECT_EQ(out.epoch, 123);
  EXPECT_EQ(out.ignored, 0);
  ASSERT_TRUE(heap->try_mark_ignored(rec.ptr));
  ASSERT_TRUE(heap->try_lookup(rec.ptr, &out));
  EXPECT_EQ(out.ignored, 1);
  ASSERT_TRUE(heap->try_find_containing(rec.ptr + 39, &out));
  EXPECT_EQ(out.ptr, rec.ptr);
  EXPECT_FALSE(heap->try_find_containing(rec.ptr + 40, &out));  // in the chunk, past the block
  uint64_t first = 0;
  ASSERT_TRUE(heap->try_erase(rec.ptr, &out, &first, t));
  EXPECT_EQ(out.size, 40u);
  EXPECT_FALSE(heap->try_lookup(rec.ptr, &out));
  EXPECT_EQ(heap->usable_size(p), 48u);  // still allocated: the caller frees it next
  EXPECT_TRUE(heap->try_deallocate(p, t));
  // The same chunk again: a later erase has a larger number.
  void* q = heap->try_allocate(40, 0, t);
  ASSERT_EQ(q, p);
  ASSERT_TRUE(heap->set_record(record_of(q, 8, 1), t));
  uint64_t second = 0;
  ASSERT_TRUE(heap->try_erase(rec.ptr, &out, &second, t));
  EXPECT_GT(second, first);
  EXPECT_GE(first, 1u);
  EXPECT_FALSE(heap->set_record(record_of(static_cast<char*>(q) + 16, 8, 1), t));
}

TEST(SmallHeapTest, EraseAndDeallocateInOneStepFreesOnlyRecordedChunks) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  void* p = heap->try_allocate(100, 0, t);
  AllocRecord rec = record_of(p, 100, 9);
  rec.family = AllocFamily::kNew;
  ASSERT_TRUE(heap->set_record(rec, t));
  void* unrecorded = heap->try_allocate(100, 0, t);  // a FILE inside fopen: no record
  AllocRecord out;
  uint64_t sequence = 0;
  bool deallocated = true;
  auto address = reinterpret_cast<uintptr_t>(unrecorded);
  EXPECT_FALSE(heap->try_erase_and_deallocate(address, &out, &sequence, t, &deallocated));
  EXPECT_FALSE(deallocated);
  EXPECT_EQ(heap->usable_size(unrecorded), 112u);  // left allocated: the caller frees it
  ASSERT_TRUE(heap->try_erase_and_deallocate(rec.ptr, &out, &sequence, t, &deallocated));
  EXPECT_TRUE(deallocated);
  EXPECT_EQ(out.size, 100u);
  EXPECT_EQ(out.stack_id, 9u);
  EXPECT_EQ(out.family, AllocFamily::kNew);
  EXPECT_GE(sequence, 1u);
  EXPECT_EQ(heap->usable_size(p), 0u);  // free
  EXPECT_FALSE(heap->try_deallocate(p, t));
  EXPECT_FALSE(heap->try_erase_and_deallocate(rec.ptr, &out, &sequence, t, &deallocated));
  EXPECT_FALSE(deallocated);
  AllocTotals totals = heap->totals();
  EXPECT_EQ(totals.erased, 1u);
  EXPECT_EQ(totals.live, 0u);
  EXPECT_EQ(heap->try_allocate(100, 0, t), p);  // at the head of the thread's list
}

TEST(SmallHeapTest, AllocateRecordedWritesTheRecordInTheSameStep) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  AllocRecord rec;
  rec.size = 40;
  rec.family = AllocFamily::kNewArray;
  rec.aligned = 1;
  rec.ignored = 1;
  rec.epoch = 321;
  void* p = heap->try_allocate_recorded(40, 0, rec, t);  // a fresh chunk
  ASSERT_NE(p, nullptr);
  AllocRecord out;
  ASSERT_TRUE(heap->try_lookup(reinterpret_cast<uintptr_t>(p), &out));
  EXPECT_EQ(out.ptr, reinterpret_cast<uintptr_t>(p));
  EXPECT_EQ(out.size, 40u);
  EXPECT_EQ(out.stack_id, 0u);
  EXPECT_EQ(out.family, AllocFamily::kNewArray);
  EXPECT_EQ(out.aligned, 1);
  EXPECT_EQ(out.ignored, 1);
  EXPECT_EQ(out.epoch, 321);
  uint64_t first = out.sequence;
  EXPECT_GE(first, 1u);
  EXPECT_EQ(heap->usable_size(p), 48u);
  ASSERT_TRUE(heap->try_deallocate(p, t));
  // The same chunk from the thread's list: a larger sequence number.
  rec.stack_id = 5;
  ASSERT_EQ(heap->try_allocate_recorded(33, 0, rec, t), p);
  ASSERT_TRUE(heap->try_lookup(reinterpret_cast<uintptr_t>(p), &out));
  EXPECT_EQ(out.size, 33u);
  EXPECT_EQ(out.stack_id, 5u);
  EXPECT_GT(out.sequence, first);
  // Sizes and alignments beyond the lists' fast path take the two steps.
  rec.stack_id = 0;
  void* big = heap->try_allocate_recorded(5000, 0, rec, t);
  void* aligned = heap->try_allocate_recorded(100, 256, rec, t);
  ASSERT_NE(big, nullptr);
  ASSERT_NE(aligned, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 256, 0u);
  ASSERT_TRUE(heap->try_lookup(reinterpret_cast<uintptr_t>(big), &out));
  EXPECT_EQ(out.size, 5000u);
  EXPECT_EQ(heap->try_allocate_recorded(SmallHeap::kMaxSize + 1, 0, rec, t), nullptr);
  AllocTotals totals = heap->totals();
  EXPECT_EQ(totals.inserted, 4u);
  EXPECT_EQ(totals.live, 3u);
  EXPECT_EQ(totals.live_bytes, 33u + 5000u + 100u);
}

TEST(SmallHeapTest, FreeUnstackedTakesOnlyMatchingBlocksWithoutAStack) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  AllocRecord rec;
  rec.size = 24;
  rec.family = AllocFamily::kNew;
  void* p = heap->try_allocate_recorded(24, 0, rec, t);
  rec.stack_id = 3;
  void* with_stack = heap->try_allocate_recorded(24, 0, rec, t);
  void* unrecorded = heap->try_allocate(24, 0, t);
  uint64_t size = 0;
  auto address = [](void* q) { return reinterpret_cast<uintptr_t>(q); };
  // Another family, the aligned form, a block with a stack, one with no record, an interior
  // pointer: nothing is done.
  EXPECT_FALSE(heap->try_free_unstacked(address(p), AllocFamily::kMalloc, false, t, &size));
  EXPECT_FALSE(heap->try_free_unstacked(address(p), AllocFamily::kNew, true, t, &size));
  EXPECT_FALSE(heap->try_free_unstacked(address(with_stack), AllocFamily::kNew, false, t, &size));
  EXPECT_FALSE(heap->try_free_unstacked(address(unrecorded), AllocFamily::kNew, false, t, &size));
  EXPECT_FALSE(heap->try_free_unstacked(address(p) + 8, AllocFamily::kNew, false, t, &size));
  EXPECT_FALSE(heap->is_freed_chunk(address(p)));
  ASSERT_TRUE(heap->try_mark_ignored(address(p)));  // ignored blocks are freed as any other
  ASSERT_TRUE(heap->try_free_unstacked(address(p), AllocFamily::kNew, false, t, &size));
  EXPECT_EQ(size, 24u);
  EXPECT_EQ(heap->usable_size(p), 0u);
  EXPECT_TRUE(heap->is_freed_chunk(address(p)));  // a second free is a double free
  EXPECT_FALSE(heap->try_free_unstacked(address(p), AllocFamily::kNew, false, t, &size));
  EXPECT_FALSE(heap->is_freed_chunk(address(p) + 8));
  EXPECT_FALSE(heap->is_freed_chunk(address(unrecorded)));
  // A chunk never recorded, freed: not one a program could have freed before.
  ASSERT_TRUE(heap->try_deallocate(unrecorded, t));
  void* fresh = heap->try_allocate(24, 0, t);
  ASSERT_EQ(fresh, unrecorded);
  ASSERT_TRUE(heap->try_deallocate(fresh, t));
  EXPECT_FALSE(heap->is_freed_chunk(address(fresh)));
  AllocTotals totals = heap->totals();
  EXPECT_EQ(totals.erased, 1u);
  EXPECT_EQ(totals.live, 1u);
  // A block a live report marked takes the full path (its count of frees after a report).
  rec.stack_id = 0;
  void* reported = heap->try_allocate_recorded(24, 0, rec, t);
  heap->for_each_marking_reported([](const AllocRecord&) { return true; });
  EXPECT_FALSE(heap->try_free_unstacked(address(reported), AllocFamily::kNew, false, t, &size));
  // A retired thread's frees go through the central list: the full path.
  void* last = heap->try_allocate_recorded(24, 0, rec, t);
  heap->retire_thread(t);
  EXPECT_FALSE(heap->try_free_unstacked(address(last), AllocFamily::kNew, false, t, &size));
  EXPECT_EQ(heap->usable_size(last), 32u);
}

TEST(SmallHeapTest, ARetiredThreadErasesInOneStepAndFreesThroughTheCentralList) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  void* p = heap->try_allocate(100, 0, t);
  ASSERT_TRUE(heap->set_record(record_of(p, 100, 9), t));
  heap->retire_thread(t);
  AllocRecord out;
  uint64_t sequence = 0;
  bool deallocated = true;
  ASSERT_TRUE(heap->try_erase_and_deallocate(reinterpret_cast<uintptr_t>(p), &out, &sequence, t,
                                             &deallocated));
  EXPECT_FALSE(deallocated);
  EXPECT_FALSE(heap->try_lookup(reinterpret_cast<uintptr_t>(p), &out));
  EXPECT_EQ(heap->usable_size(p), 112u);
  EXPECT_TRUE(heap->try_deallocate(p, t));
  EXPECT_EQ(heap->usable_size(p), 0u);
}

TEST(SmallHeapTest, ForEachVisitsRecordedChunksOnlyAndMarksReported) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  std::vector<void*> recorded;
  for (size_t size : {8, 300, 5000}) {
    for (int i = 0; i < 50; ++i) {
      void* p = heap->try_allocate(size, 0, t);
      ASSERT_TRUE(heap->set_record(record_of(p, size, static_cast<uint32_t>(i + 1)), t));
      recorded.push_back(p);
    }
  }
  void* unrecorded = heap->try_allocate(8, 0, t);
  ASSERT_NE(unrecorded, nullptr);
  std::set<uintptr_t> visited;
  heap->for_each([&](const AllocRecord& rec) { visited.insert(rec.ptr); });
  EXPECT_EQ(visited.size(), recorded.size());
  EXPECT_FALSE(visited.count(reinterpret_cast<uintptr_t>(unrecorded)));
  EXPECT_EQ(heap->size(), recorded.size());
  heap->for_each_marking_reported([&](const AllocRecord& rec) { return rec.size == 300; });
  size_t reported = 0;
  heap->for_each([&](const AllocRecord& rec) { reported += rec.reported; });
  EXPECT_EQ(reported, 50u);
}

TEST(SmallHeapTest, ForEachInAddressOrderVisitsWhatForEachVisitsSorted) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  // Several classes, each in segments of its own, made in an order unlike their addresses';
  // some chunks freed, some never recorded.
  std::vector<void*> blocks;
  for (int round = 0; round < 3; ++round) {
    for (size_t size : {size_t{4000}, size_t{16}, size_t{65536}, size_t{300}}) {
      for (int i = 0; i < 200; ++i) {
        void* p = heap->try_allocate(size, 0, t);
        ASSERT_NE(p, nullptr);
        if (i % 7 != 0) {
          ASSERT_TRUE(heap->set_record(record_of(p, size, 1), t));
        }
        blocks.push_back(p);
      }
    }
  }
  for (size_t i = 0; i < blocks.size(); i += 5) ASSERT_TRUE(heap->try_deallocate(blocks[i], t));
  std::vector<uintptr_t> expected;
  heap->for_each([&](const AllocRecord& rec) { expected.push_back(rec.ptr); });
  std::sort(expected.begin(), expected.end());
  std::vector<uintptr_t> visited;
  heap->for_each_in_address_order([&](const AllocRecord& rec) { visited.push_back(rec.ptr); });
  EXPECT_GT(visited.size(), 1500u);
  EXPECT_EQ(visited, expected);
}

TEST(SmallHeapTest, TotalsCountRecordsOfLiveAndRetiredThreads) {
  HeapPtr heap = new_heap();
  HeapThread main_thread{};
  std::thread other([&] {
    HeapThread t{};
    for (int i = 0; i < 10; ++i) {
      void* p = heap->try_allocate(100, 0, t);
      ASSERT_TRUE(heap->set_record(record_of(p, 100, 1), t));
    }
    heap->retire_thread(t);
  });
  other.join();
  void* p = heap->try_allocate(20, 0, main_thread);
  ASSERT_TRUE(heap->set_record(record_of(p, 20, 2), main_thread));
  AllocRecord out;
  uint64_t sequence = 0;
  ASSERT_TRUE(heap->try_erase(reinterpret_cast<uintptr_t>(p), &out, &sequence, main_thread));
  ASSERT_TRUE(heap->try_restore(out, main_thread));  // undoes the erase in the totals
  AllocTotals totals = heap->totals();
  EXPECT_EQ(totals.inserted, 11u);
  EXPECT_EQ(totals.inserted_bytes, 1020u);
  EXPECT_EQ(totals.erased, 0u);
  EXPECT_EQ(totals.live, 11u);
  EXPECT_EQ(totals.live_bytes, 1020u);
  // A recorded chunk freed without an erase first (a free inside the runtime) counts too.
  EXPECT_TRUE(heap->try_deallocate(p, main_thread));
  totals = heap->totals();
  EXPECT_EQ(totals.erased, 1u);
  EXPECT_EQ(totals.live_bytes, 1000u);
}

TEST(SmallHeapTest, ARetiredThreadsChunksServeOthersAndItsLaterFreesGoCentral) {
  HeapPtr heap = new_heap();
  std::vector<void*> freed;
  HeapThread leaver{};
  std::thread([&] {
    for (int i = 0; i < 20; ++i) freed.push_back(heap->try_allocate(48, 0, leaver));
    void* kept = heap->try_allocate(48, 0, leaver);
    for (void* p : freed) ASSERT_TRUE(heap->try_deallocate(p, leaver));
    heap->retire_thread(leaver);
    EXPECT_EQ(heap->try_allocate(48, 0, leaver), nullptr);  // retired: the system's then
    EXPECT_TRUE(heap->try_deallocate(kept, leaver));        // to the central list
    freed.push_back(kept);
  }).join();
  HeapThread t{};
  std::set<uintptr_t> reused;
  for (size_t i = 0; i < 200; ++i)
    reused.insert(reinterpret_cast<uintptr_t>(heap->try_allocate(48, 0, t)));
  for (void* p : freed) EXPECT_TRUE(reused.count(reinterpret_cast<uintptr_t>(p))) << p;
}

TEST(SmallHeapTest, RemoteFreeNeedsTheCentralLock) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  void* p = heap->try_allocate(64, 0, t);
  heap->lock_all();
  EXPECT_FALSE(heap->try_deallocate_remote(p));  // would wait: refused, nothing done
  heap->unlock_all();
  EXPECT_EQ(heap->usable_size(p), 64u);
  EXPECT_TRUE(heap->try_deallocate_remote(p));
  EXPECT_EQ(heap->usable_size(p), 0u);
  EXPECT_FALSE(heap->try_deallocate_remote(p));
}

TEST(SmallHeapTest, ManyChunksOfOneClassSpillToTheCentralListAndComeBack) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  std::vector<void*> blocks;
  for (int i = 0; i < 100000; ++i) blocks.push_back(heap->try_allocate(16, 0, t));
  for (void* p : blocks) ASSERT_TRUE(heap->try_deallocate(p, t));
  std::set<void*> again;
  for (int i = 0; i < 100000; ++i) again.insert(heap->try_allocate(16, 0, t));
  EXPECT_EQ(again.size(), 100000u);
  // Nothing new carved but what was left of the last fresh batch (64 chunks of 16 bytes).
  std::set<void*> both(blocks.begin(), blocks.end());
  both.insert(again.begin(), again.end());
  EXPECT_LE(both.size(), 100000u + 64);
  EXPECT_GT(heap->metadata_bytes(), 100000u * 16 - 1);
}

TEST(SmallHeapTest, ThreadsAllocateAndFreeEachOthersChunks) {
  HeapPtr heap = new_heap();
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  std::vector<std::vector<void*>> handed(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int n = 0; n < kThreads; ++n) {
    threads.emplace_back([&, n] {
      HeapThread t{};
      std::vector<void*> mine;
      for (int i = 0; i < kRounds; ++i) {
        size_t size = static_cast<size_t>(16 + (i * 37 + n * 101) % 2000);
        auto* p = static_cast<unsigned char*>(heap->try_allocate(size, 0, t));
        if (p == nullptr) {
          ++failures;
          continue;
        }
        std::memset(p, n, size);
        if (!heap->set_record(record_of(p, size, static_cast<uint32_t>(n + 1)), t)) ++failures;
        mine.push_back(p);
        if (i % 3 == 0) {
          void* q = mine[mine.size() / 2];
          mine[mine.size() / 2] = mine.back();
          mine.pop_back();
          AllocRecord out;
          uint64_t sequence = 0;
          if (!heap->try_erase(reinterpret_cast<uintptr_t>(q), &out, &sequence, t)) ++failures;
          if (!heap->try_deallocate(q, t)) ++failures;
        }
      }
      handed[static_cast<size_t>(n)] = mine;
      heap->retire_thread(t);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  size_t live = 0;
  for (const auto& mine : handed) live += mine.size();
  EXPECT_EQ(heap->size(), live);
  EXPECT_EQ(heap->totals().live, live);
  // Another thread frees them all: each chunk once, each still holding its owner's bytes.
  HeapThread t{};
  for (size_t n = 0; n < handed.size(); ++n) {
    for (void* p : handed[n]) {
      EXPECT_EQ(*static_cast<unsigned char*>(p), n);
      AllocRecord out;
      uint64_t sequence = 0;
      ASSERT_TRUE(heap->try_erase(reinterpret_cast<uintptr_t>(p), &out, &sequence, t));
      EXPECT_EQ(out.stack_id, n + 1);
      ASSERT_TRUE(heap->try_deallocate(p, t));
    }
  }
  EXPECT_EQ(heap->size(), 0u);
  EXPECT_EQ(heap->totals().live, 0u);
}

// Whether the page holding `p` has memory behind it.
bool resident(const void* p) {
  auto page = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{4095};
  unsigned char state = 0;
  EXPECT_EQ(mincore(reinterpret_cast<void*>(page), 4096, &state), 0);
  return (state & 1) != 0;
}

// Allocates `n` chunks of `size` bytes, each filled with its index.
std::vector<void*> filled_chunks(SmallHeap& heap, HeapThread& t, size_t n, size_t size) {
  std::vector<void*> chunks;
  for (size_t i = 0; i < n; ++i) {
    void* p = heap.try_allocate(size, 0, t);
    EXPECT_NE(p, nullptr);
    memset(p, static_cast<int>(i + 1), size);
    chunks.push_back(p);
  }
  return chunks;
}

TEST(SmallHeapTest, ChunksNoThreadTookForTheDelayGoBackToTheSystem) {
  HeapPtr heap = new_heap();
  heap->test_only_set_release_delay(0);  // every spill checks
  HeapThread t{};
  std::vector<void*> chunks = filled_chunks(*heap, t, 256, 4096);
  void* kept = chunks[200];
  chunks.erase(chunks.begin() + 200);
  for (void* p : chunks) ASSERT_TRUE(heap->try_deallocate(p, t));
  // Freed first: spilled to the central list, and still there at the next check.
  EXPECT_FALSE(resident(chunks[0]));
  EXPECT_FALSE(resident(chunks[100]));
  // Freed last: still in the thread's own list.
  EXPECT_TRUE(resident(chunks.back()));
  EXPECT_EQ(*static_cast<unsigned char*>(kept), 201);  // an allocated chunk keeps its bytes
  // Chunks given back serve again: their pages come back at the first touch.
  std::vector<void*> again = filled_chunks(*heap, t, 255, 4096);
  std::set<void*> before(chunks.begin(), chunks.end());
  for (void* p : again) EXPECT_EQ(before.count(p), 1u);
  EXPECT_EQ(*static_cast<unsigned char*>(again.back()), 255);
  EXPECT_EQ(heap->totals().live, 0u);  // never recorded: try_deallocate counted nothing
}

// Whatever the order of allocations and frees, giving pages back never touches a chunk that
// is allocated: every one keeps its bytes (a page given back would read as zero).
TEST(SmallHeapTest, GivingPagesBackNeverTouchesAnAllocatedChunk) {
  HeapPtr heap = new_heap();
  heap->test_only_set_release_delay(0);
  HeapThread t{};
  struct Held {
    unsigned char* p;
    size_t size;
    unsigned char fill;
  };
  std::vector<Held> held;
  uint32_t x = 12345;
  for (int op = 0; op < 40000; ++op) {
    x = x * 1103515245u + 12345u;
    bool allocate = held.size() < 64 || ((x >> 16) % 100 < (held.size() < 3000 ? 55u : 45u));
    if (allocate) {
      size_t size = (x >> 8) % 3 == 0 ? 48 : 4096;
      auto* p = static_cast<unsigned char*>(heap->try_allocate(size, 0, t));
      ASSERT_NE(p, nullptr);
      auto fill = static_cast<unsigned char>(1 + op % 255);
      memset(p, fill, size);
      held.push_back({p, size, fill});
    } else {
      size_t i = (x >> 4) % held.size();
      ASSERT_TRUE(heap->try_deallocate(held[i].p, t));
      held[i] = held.back();
      held.pop_back();
    }
    if (op % 500 == 0) {
      for (const Held& h : held) {
        ASSERT_EQ(h.p[0], h.fill) << "op " << op;
        ASSERT_EQ(h.p[h.size - 1], h.fill) << "op " << op;
      }
    }
  }
  EXPECT_GT(heap->trim(t), 0u);
  for (const Held& h : held) {
    ASSERT_EQ(h.p[0], h.fill);
    ASSERT_EQ(h.p[h.size - 1], h.fill);
  }
}

// Chunks taken from the central list between two checks are not idle, even though the list
// grew again behind them: only those that stayed in it the whole time go back.
TEST(SmallHeapTest, OnlyChunksThatStayedInTheListGoBack) {
  HeapPtr heap = new_heap();
  heap->test_only_set_release_delay(uint64_t{1} << 62);  // only the checks this test asks for
  HeapThread t{};
  std::vector<void*> first = filled_chunks(*heap, t, 300, 4096);
  for (void* p : first) ASSERT_TRUE(heap->try_deallocate(p, t));
  heap->test_only_check_idle_now();  // marks the list's chunks as candidates
  // Taken back: the thread's cached chunks, then batches from the central list.
  std::vector<void*> again = filled_chunks(*heap, t, 100, 4096);
  heap->test_only_check_idle_now();  // the candidates still in the list go back
  std::set<void*> taken(again.begin(), again.end());
  size_t given_back = 0;
  for (void* p : first) {
    if (taken.count(p) == 0 && !resident(p)) ++given_back;
  }
  EXPECT_GE(given_back, 150u);
  for (size_t i = 0; i < again.size(); ++i) {
    ASSERT_TRUE(resident(again[i])) << i;
    ASSERT_EQ(*static_cast<unsigned char*>(again[i]), i + 1) << i;
  }
}

TEST(SmallHeapTest, ChunksFreedWithinTheDelayStay) {
  HeapPtr heap = new_heap();  // the default delay: a second
  HeapThread t{};
  std::vector<void*> chunks = filled_chunks(*heap, t, 256, 4096);
  for (void* p : chunks) ASSERT_TRUE(heap->try_deallocate(p, t));
  size_t still = 0;
  for (void* p : chunks) still += resident(p) ? 1 : 0;
  EXPECT_EQ(still, chunks.size());
}

TEST(SmallHeapTest, TrimGivesBackTheMemoryOfEveryFreeChunk) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  std::vector<void*> small = filled_chunks(*heap, t, 1024, 48);  // 12 per page
  std::vector<void*> large = filled_chunks(*heap, t, 64, 8192);
  void* kept = large[10];
  for (void* p : large) {
    if (p != kept) {
      ASSERT_TRUE(heap->try_deallocate(p, t));
    }
  }
  for (size_t i = 0; i < small.size(); ++i) {
    if (i != 500) {
      ASSERT_TRUE(heap->try_deallocate(small[i], t));
    }
  }
  EXPECT_TRUE(resident(large[0]));  // in the thread's list, within the delay
  EXPECT_GE(heap->trim(t), size_t{62} * 8192);
  for (void* p : large) {
    if (p != kept) {
      EXPECT_FALSE(resident(p));
    }
  }
  EXPECT_TRUE(resident(kept));
  EXPECT_EQ(*static_cast<unsigned char*>(kept), 11);
  EXPECT_FALSE(resident(small[0]));
  EXPECT_TRUE(resident(small[500]));  // its page holds an allocated chunk
  EXPECT_EQ(*static_cast<unsigned char*>(small[500]), 501 % 256);
}

}  // namespace
}  // namespace memtrack::core
