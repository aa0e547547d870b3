// Google Benchmark: allocation-table insert+erase and lookup, at 1, 2 and 4 threads.
#include <benchmark/benchmark.h>

#include <memory>

#include "core/alloc_table.h"

namespace memtrack::core {
namespace {

AllocTable* shared_table() {
  static AllocTable* table = new AllocTable();
  return table;
}

// Each thread churns its own pointer range over a working set of 4096 live blocks, the
// pattern of a malloc/free loop with a non-LIFO working set.
void BM_InsertErase(benchmark::State& state) {
  AllocTable* table = shared_table();
  constexpr uintptr_t kWorkingSet = 4096;
  uintptr_t base = (static_cast<uintptr_t>(state.thread_index()) + 1) << 40;
  for (uintptr_t i = 0; i < kWorkingSet; ++i) {
    AllocRecord rec;
    rec.ptr = base + i * 48;
    rec.size = 48;
    (void)table->try_insert(rec);
  }
  uintptr_t i = 0;
  for (auto _ : state) {
    AllocRecord old;
    uintptr_t slot = (i * 2654435761u) % kWorkingSet;
    table->try_erase(base + slot * 48, &old);
    AllocRecord rec = old;
    rec.ptr = base + slot * 48;
    rec.size = 48;
    benchmark::DoNotOptimize(table->try_insert(rec));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InsertErase)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

void BM_Lookup(benchmark::State& state) {
  static std::unique_ptr<AllocTable> table = [] {
    auto t = std::make_unique<AllocTable>();
    for (uintptr_t i = 1; i <= 1 << 20; ++i) {
      AllocRecord rec;
      rec.ptr = i * 32;
      (void)t->try_insert(rec);
    }
    return t;
  }();
  uintptr_t i = 1;
  for (auto _ : state) {
    AllocRecord rec;
    benchmark::DoNotOptimize(table->try_lookup(((i * 2654435761u) % (1 << 20) + 1) * 32, &rec));
    ++i;
  }
}
BENCHMARK(BM_Lookup)->Threads(1)->Threads(2)->UseRealTime();

// A program with a large heap: 1M live blocks of 48-byte chunks laid out as glibc lays out
// consecutive small allocations, and a free followed by an allocation that reuses the address
// (glibc's tcache hands the freed chunk back). Heap order walks the blocks in address order,
// as a program frees what it allocated together; random order picks any block, the worst case
// for any layout.
constexpr uintptr_t kLargeHeapBlocks = 1 << 20;
constexpr uintptr_t kLargeHeapBase = uintptr_t{0x55} << 40;
constexpr uintptr_t kChunkBytes = 48;

AllocTable* large_heap_table() {
  static AllocTable* table = [] {
    auto* t = new AllocTable();
    for (uintptr_t i = 0; i < kLargeHeapBlocks; ++i) {
      AllocRecord rec;
      rec.ptr = kLargeHeapBase + i * kChunkBytes;
      rec.size = 32;
      rec.stack_id = static_cast<uint32_t>(i % 4000);
      (void)t->try_insert(rec);
    }
    return t;
  }();
  return table;
}

void BM_FreeRefillLargeHeap(benchmark::State& state) {
  AllocTable* table = large_heap_table();
  bool heap_order = state.range(0) != 0;
  uintptr_t i = 0;
  for (auto _ : state) {
    uintptr_t block = heap_order ? i % kLargeHeapBlocks : (i * 2654435761u) % kLargeHeapBlocks;
    AllocRecord old;
    (void)table->try_erase(kLargeHeapBase + block * kChunkBytes, &old);
    benchmark::DoNotOptimize(table->try_insert(old));
    ++i;
  }
  state.SetLabel(heap_order ? "heap order" : "random order");
}
BENCHMARK(BM_FreeRefillLargeHeap)->Arg(1)->Arg(0);

}  // namespace
}  // namespace memtrack::core
