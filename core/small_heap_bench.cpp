// Google Benchmark: a block's whole life in memtrack's own heap (allocate, record, erase the
// record, free) against the same life with glibc's malloc and a record in the allocation
// table, the path the heap replaced; on a small working set and among 1M live blocks.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <vector>

#include "core/alloc_table.h"
#include "core/small_heap.h"

namespace memtrack::core {
namespace {

// One heap for the whole process, as the runtime has; each benchmark thread has its own
// HeapThread, as each of the program's threads has.
SmallHeap* shared_heap() {
  static SmallHeap* heap = [] {
    auto* h = new SmallHeap();
    if (!h->try_init()) std::abort();
    return h;
  }();
  return heap;
}
thread_local HeapThread t_heap_thread;

AllocTable* shared_table() {
  static AllocTable* table = new AllocTable();
  return table;
}

AllocRecord record_of(void* p, size_t size) {
  AllocRecord rec;
  rec.ptr = reinterpret_cast<uintptr_t>(p);
  rec.size = size;
  rec.stack_id = 7;
  return rec;
}

constexpr size_t kWorkingSet = 4096;
constexpr size_t kBlockSize = 48;

// Frees a recorded block: in one step, as free and delete do (try_erase_and_deallocate), or
// with the record erased first and the chunk freed after, as realloc does.
void free_recorded(SmallHeap* heap, HeapThread& t, void* p, bool one_step) {
  AllocRecord old;
  uint64_t sequence = 0;
  if (one_step) {
    bool deallocated = false;
    heap->try_erase_and_deallocate(reinterpret_cast<uintptr_t>(p), &old, &sequence, t,
                                   &deallocated);
    benchmark::DoNotOptimize(deallocated);
    return;
  }
  heap->try_erase(reinterpret_cast<uintptr_t>(p), &old, &sequence, t);
  heap->try_deallocate(p, t);
}

// Each thread keeps 4096 live blocks and replaces a pseudo-random one per iteration (the
// churn workload's non-LIFO pattern): free with its record, allocate and record anew.
// Argument: 1 frees in one step, 0 in two (free_recorded).
void BM_HeapReplaceBlock(benchmark::State& state) {
  SmallHeap* heap = shared_heap();
  HeapThread& t = t_heap_thread;
  bool one_step = state.range(0) != 0;
  std::vector<void*> blocks(kWorkingSet);
  for (void*& p : blocks) {
    p = heap->try_allocate(kBlockSize, 0, t);
    (void)heap->set_record(record_of(p, kBlockSize), t);
  }
  uint64_t i = 0;
  for (auto _ : state) {
    size_t slot = (i++ * 2654435761u) % kWorkingSet;
    free_recorded(heap, t, blocks[slot], one_step);
    void* p = heap->try_allocate(kBlockSize, 0, t);
    benchmark::DoNotOptimize(heap->set_record(record_of(p, kBlockSize), t));
    blocks[slot] = p;
  }
  for (void* p : blocks) free_recorded(heap, t, p, one_step);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetLabel(one_step ? "free in one step" : "erase, then free");
}
BENCHMARK(BM_HeapReplaceBlock)->Arg(1)->Arg(0)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// The same with glibc's malloc and free and a record in the allocation table.
void BM_GlibcAndTableReplaceBlock(benchmark::State& state) {
  AllocTable* table = shared_table();
  std::vector<void*> blocks(kWorkingSet);
  for (void*& p : blocks) {
    p = std::malloc(kBlockSize);
    (void)table->try_insert(record_of(p, kBlockSize));
  }
  uint64_t i = 0;
  for (auto _ : state) {
    size_t slot = (i++ * 2654435761u) % kWorkingSet;
    AllocRecord old;
    table->try_erase(reinterpret_cast<uintptr_t>(blocks[slot]), &old);
    std::free(blocks[slot]);
    void* p = std::malloc(kBlockSize);
    benchmark::DoNotOptimize(table->try_insert(record_of(p, kBlockSize)));
    blocks[slot] = p;
  }
  for (void* p : blocks) {
    AllocRecord old;
    table->try_erase(reinterpret_cast<uintptr_t>(p), &old);
    std::free(p);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_GlibcAndTableReplaceBlock)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// A large heap: 1M live blocks of 32 bytes, one replaced per iteration, in allocation
// order (a program freeing what it allocated together) or in random order (the worst case).
constexpr size_t kLargeHeapBlocks = size_t{1} << 20;
constexpr size_t kLargeBlockSize = 32;

// Replaces one block per iteration (replace(old block) returns the new one), in allocation
// order or at random.
template <typename Replace>
void replace_among_million(benchmark::State& state, std::vector<void*>& blocks, Replace replace) {
  bool in_order = state.range(0) != 0;
  uint64_t i = 0;
  for (auto _ : state) {
    size_t slot = in_order ? i % kLargeHeapBlocks : (i * 2654435761u) % kLargeHeapBlocks;
    ++i;
    blocks[slot] = replace(blocks[slot]);
  }
  state.SetLabel(in_order ? "allocation order" : "random order");
}

void BM_HeapReplaceAmongMillion(benchmark::State& state) {
  SmallHeap* heap = shared_heap();
  HeapThread& t = t_heap_thread;
  static std::vector<void*>* blocks = [&] {
    auto* v = new std::vector<void*>(kLargeHeapBlocks);
    for (void*& p : *v) {
      p = heap->try_allocate(kLargeBlockSize, 0, t);
      (void)heap->set_record(record_of(p, kLargeBlockSize), t);
    }
    return v;
  }();
  replace_among_million(state, *blocks, [&](void* old_block) {
    free_recorded(heap, t, old_block, true);
    void* p = heap->try_allocate(kLargeBlockSize, 0, t);
    benchmark::DoNotOptimize(heap->set_record(record_of(p, kLargeBlockSize), t));
    return p;
  });
}
BENCHMARK(BM_HeapReplaceAmongMillion)->Arg(1)->Arg(0);

void BM_GlibcAndTableReplaceAmongMillion(benchmark::State& state) {
  static AllocTable* table = new AllocTable();
  static std::vector<void*>* blocks = [] {
    auto* v = new std::vector<void*>(kLargeHeapBlocks);
    for (void*& p : *v) {
      p = std::malloc(kLargeBlockSize);
      (void)table->try_insert(record_of(p, kLargeBlockSize));
    }
    return v;
  }();
  replace_among_million(state, *blocks, [&](void* old_block) {
    AllocRecord old;
    table->try_erase(reinterpret_cast<uintptr_t>(old_block), &old);
    std::free(old_block);
    void* p = std::malloc(kLargeBlockSize);
    benchmark::DoNotOptimize(table->try_insert(record_of(p, kLargeBlockSize)));
    return p;
  });
}
BENCHMARK(BM_GlibcAndTableReplaceAmongMillion)->Arg(1)->Arg(0);

}  // namespace
}  // namespace memtrack::core
