// Tests of the heap's part of the sampled mode's fast path (core/small_heap.h:
// try_pop_recorded, try_push_unstacked): the records it writes are those of the lean path
// (try_allocate_recorded, try_free_unstacked), and each case it leaves to the slow path leaves
// the heap exactly as it was.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "core/small_heap.h"

namespace memtrack::core {
namespace {

struct HeapDeleter {
  void operator()(SmallHeap* heap) const {
    heap->test_only_release();
    delete heap;
  }
};
using HeapPtr = std::unique_ptr<SmallHeap, HeapDeleter>;

HeapPtr new_heap() {
  HeapPtr heap(new SmallHeap());
  EXPECT_TRUE(heap->try_init());
  return heap;
}

uintptr_t address(void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

bool accept_all(uint64_t) {
  return true;
}

// Fills the thread's list of the class of `size` with `n` freed chunks (a refill, then frees).
void stock(SmallHeap& heap, HeapThread& t, size_t size, int n) {
  void* blocks[64];
  for (int i = 0; i < n; ++i) blocks[i] = heap.try_allocate(size, 0, t);
  for (int i = 0; i < n; ++i) ASSERT_TRUE(heap.try_deallocate(blocks[i], t));
}

TEST(SmallHeapFastPathTest, ClassOfSizeIsClassForAtMallocsAlignment) {
  for (size_t size = 0; size <= SmallHeap::kMaxSize; ++size) {
    ASSERT_EQ(static_cast<int>(SmallHeap::class_of_size(size)), SmallHeap::class_for(size, 0))
        << size;
  }
}

TEST(SmallHeapFastPathTest, APopWritesTheLeanPathsRecord) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  // An empty list (no chunk yet, no counters): the slow path's refill.
  EXPECT_EQ(heap->try_pop_recorded(40, AllocFamily::kNew, false, 0, t), nullptr);
  stock(*heap, t, 40, 2);
  AllocTotals before = heap->totals();
  void* p = heap->try_pop_recorded(40, AllocFamily::kNewArray, true, 321, t);
  ASSERT_NE(p, nullptr);
  AllocRecord out;
  ASSERT_TRUE(heap->try_lookup(address(p), &out));
  EXPECT_EQ(out.ptr, address(p));
  EXPECT_EQ(out.size, 40u);
  EXPECT_EQ(out.stack_id, 0u);
  EXPECT_EQ(out.family, AllocFamily::kNewArray);
  EXPECT_EQ(out.aligned, 0);
  EXPECT_EQ(out.ignored, 1);
  EXPECT_EQ(out.epoch, 321);
  EXPECT_EQ(heap->usable_size(p), 48u);
  // Numbers grow with each record, here and on the lean path alike.
  AllocRecord rec;
  rec.size = 33;
  void* q = heap->try_allocate_recorded(33, 0, rec, t);
  AllocRecord later;
  ASSERT_TRUE(heap->try_lookup(address(q), &later));
  EXPECT_GT(later.sequence, out.sequence);
  AllocTotals after = heap->totals();
  EXPECT_EQ(after.inserted, before.inserted + 2);
  EXPECT_EQ(after.live_bytes, before.live_bytes + 40 + 33);
}

TEST(SmallHeapFastPathTest, APopTakesTheFreshChunksOfARefillInOrder) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  void* first = heap->try_allocate(64, 0, t);  // carves a batch of fresh chunks, takes one
  ASSERT_NE(first, nullptr);
  size_t c = SmallHeap::class_of_size(64);
  ASSERT_EQ(t.lists[c].head, 0u);
  ASSERT_LT(t.lists[c].fresh_next, t.lists[c].fresh_end);
  uintptr_t expected = address(first) + 64;
  while (t.lists[c].fresh_next < t.lists[c].fresh_end) {
    void* p = heap->try_pop_recorded(64, AllocFamily::kMalloc, false, 0, t);
    ASSERT_EQ(address(p), expected);
    AllocRecord out;
    ASSERT_TRUE(heap->try_lookup(address(p), &out));
    EXPECT_EQ(out.size, 64u);
    EXPECT_GE(out.sequence, 1u);
    expected += 64;
  }
  // The batch used up: the next one is the slow path's refill.
  EXPECT_EQ(heap->try_pop_recorded(64, AllocFamily::kMalloc, false, 0, t), nullptr);
}

TEST(SmallHeapFastPathTest, APopServesEveryClassAndAZeroByteBlock) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{256}, size_t{257}, size_t{4000}, SmallHeap::kMaxSize}) {
    stock(*heap, t, size, 1);
    void* p = heap->try_pop_recorded(size, AllocFamily::kMalloc, false, 0, t);
    ASSERT_NE(p, nullptr) << size;
    EXPECT_GE(heap->usable_size(p), size == 0 ? 1 : size);
    AllocRecord out;
    ASSERT_TRUE(heap->try_lookup(address(p), &out));
    EXPECT_EQ(out.size, size);
  }
}

TEST(SmallHeapFastPathTest, APopLeavesTheSequencesSynchronisationToTheSlowPath) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  stock(*heap, t, 24, 2);
  t.unsynced = SmallHeap::kSequenceSync - 1;
  EXPECT_EQ(heap->try_pop_recorded(24, AllocFamily::kMalloc, false, 0, t), nullptr);
  EXPECT_EQ(t.unsynced, SmallHeap::kSequenceSync - 1);
  EXPECT_EQ(heap->totals().live, 0u);
  t.unsynced = 0;
  EXPECT_NE(heap->try_pop_recorded(24, AllocFamily::kMalloc, false, 0, t), nullptr);
}

TEST(SmallHeapFastPathTest, APushFreesOnlyMatchingBlocksWithoutAStack) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  stock(*heap, t, 24, 4);
  void* p = heap->try_pop_recorded(24, AllocFamily::kNew, false, 0, t);
  AllocRecord rec;
  rec.size = 24;
  rec.family = AllocFamily::kNew;
  rec.stack_id = 3;
  void* with_stack = heap->try_allocate_recorded(24, 0, rec, t);
  rec.stack_id = 0;
  rec.aligned = 1;
  void* aligned = heap->try_allocate_recorded(24, 0, rec, t);
  void* unrecorded = heap->try_allocate(24, 0, t);
  ASSERT_TRUE(p && with_stack && aligned && unrecorded);
  uint64_t size = 0;
  // Another family, a block with a stack, an aligned one, one with no record, an interior
  // pointer, a pointer outside the heap, the caller's refusal: nothing is done.
  EXPECT_FALSE(heap->try_push_unstacked(address(p), AllocFamily::kMalloc, t, &size, accept_all));
  EXPECT_FALSE(
      heap->try_push_unstacked(address(with_stack), AllocFamily::kNew, t, &size, accept_all));
  EXPECT_FALSE(heap->try_push_unstacked(address(aligned), AllocFamily::kNew, t, &size, accept_all));
  EXPECT_FALSE(
      heap->try_push_unstacked(address(unrecorded), AllocFamily::kNew, t, &size, accept_all));
  EXPECT_FALSE(heap->try_push_unstacked(address(p) + 8, AllocFamily::kNew, t, &size, accept_all));
  int local = 0;
  EXPECT_FALSE(heap->try_push_unstacked(address(&local), AllocFamily::kNew, t, &size, accept_all));
  uint64_t offered = 0;
  EXPECT_FALSE(heap->try_push_unstacked(address(p), AllocFamily::kNew, t, &size, [&](uint64_t s) {
    offered = s;
    return false;
  }));
  EXPECT_EQ(offered, 24u);
  EXPECT_EQ(heap->usable_size(p), 32u);  // still allocated, still recorded
  AllocRecord out;
  EXPECT_TRUE(heap->try_lookup(address(p), &out));
  // The free itself, and a second one: a double free, for the slow path to report.
  ASSERT_TRUE(heap->try_push_unstacked(address(p), AllocFamily::kNew, t, &size, accept_all));
  EXPECT_EQ(size, 24u);
  EXPECT_EQ(heap->usable_size(p), 0u);
  EXPECT_TRUE(heap->is_freed_chunk(address(p)));
  EXPECT_FALSE(heap->try_push_unstacked(address(p), AllocFamily::kNew, t, &size, accept_all));
  // The freed chunk is the next one handed out.
  EXPECT_EQ(heap->try_pop_recorded(20, AllocFamily::kMalloc, false, 0, t), p);
}

TEST(SmallHeapFastPathTest, APushLeavesASpillAndARetiredThreadToTheSlowPath) {
  HeapPtr heap = new_heap();
  HeapThread t{};
  // The class of 64 KiB chunks keeps at most 4 in a thread's list (twice its batch of 2).
  size_t size = SmallHeap::kMaxSize;
  size_t c = SmallHeap::class_of_size(size);
  AllocRecord rec;
  rec.size = size;
  void* recorded[2];
  for (void*& r : recorded) r = heap->try_allocate_recorded(size, 0, rec, t);
  void* others[8];
  for (void*& o : others) o = heap->try_allocate(size, 0, t);
  ASSERT_TRUE(recorded[0] && recorded[1] && others[7]);
  int freed = 0;
  while (t.lists[c].count < 4) ASSERT_TRUE(heap->try_deallocate(others[freed++], t));
  uint64_t bytes = 0;
  EXPECT_FALSE(
      heap->try_push_unstacked(address(recorded[0]), AllocFamily::kMalloc, t, &bytes, accept_all));
  EXPECT_EQ(heap->usable_size(recorded[0]), size);
  ASSERT_TRUE(heap->try_deallocate(others[freed], t));  // the slow path's spill: 2 stay
  EXPECT_EQ(t.lists[c].count, 2u);
  EXPECT_TRUE(
      heap->try_push_unstacked(address(recorded[0]), AllocFamily::kMalloc, t, &bytes, accept_all));
  EXPECT_EQ(t.lists[c].count, 3u);
  // A retired thread has no counters and empty lists: nothing for the fast path.
  heap->retire_thread(t);
  EXPECT_FALSE(
      heap->try_push_unstacked(address(recorded[1]), AllocFamily::kMalloc, t, &bytes, accept_all));
  EXPECT_EQ(heap->try_pop_recorded(size, AllocFamily::kMalloc, false, 0, t), nullptr);
  EXPECT_EQ(heap->usable_size(recorded[1]), size);
}

}  // namespace
}  // namespace memtrack::core
