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

}  // namespace
}  // namespace memtrack::core
