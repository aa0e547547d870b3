// Google Benchmark: the leak scan's classification of N live blocks of 32 bytes made with
// malloc, handed over in a shuffled order as the allocation table's hash order hands them:
// sorting alone, and the whole classification (sort, roots, mark, cliques, grouping) for a
// heap that is reachable from a root array, one that hangs off a lost array (the
// live_blocks workload, whose global the compiler keeps in a register), and a linked list
// in shuffled address order. Counters: the scan's working memory per block. Then the roots
// alone, full of words between the blocks but in none.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

#include "runtime/leakcheck/leak_report.h"
#include "runtime/leakcheck/reachability.h"
#include "runtime/leakcheck/scan_blocks.h"

namespace memtrack::rt {
namespace {

constexpr size_t kBlockSize = 32;

enum class Shape {
  kReachable,  // an array that is a root (as a global array is) holds every block
  kLost,       // a lost block array holds every block: 1 definite + N indirect
  kList,       // a root holds the head of a list through every block, in shuffled order
};

struct Heap {
  std::vector<void*> blocks;  // in the order the table hands them over
  void** array = nullptr;     // a block (kLost) or a root range (kReachable)
  void* head = nullptr;       // the list's head (kList), held by a root
};

Heap make_heap(size_t n, Shape shape) {
  Heap heap;
  heap.array = static_cast<void**>(malloc(n * sizeof(void*)));
  for (size_t i = 0; i < n; ++i) {
    heap.array[i] = malloc(kBlockSize);
    std::fill_n(static_cast<char*>(heap.array[i]), kBlockSize, static_cast<char>(i & 0x7f));
  }
  heap.blocks.assign(heap.array, heap.array + n);
  std::mt19937_64 rng(42);
  std::shuffle(heap.blocks.begin(), heap.blocks.end(), rng);
  if (shape == Shape::kList) {
    for (size_t i = 0; i + 1 < n; ++i) *static_cast<void**>(heap.blocks[i]) = heap.blocks[i + 1];
    heap.head = heap.blocks[0];
  }
  if (shape == Shape::kLost) heap.blocks.push_back(heap.array);
  return heap;
}

void free_heap(Heap& heap, size_t n) {
  for (size_t i = 0; i < n; ++i) free(heap.array[i]);
  free(heap.array);
}

bool add_blocks(ScanBlocks& blocks, const Heap& heap, size_t n) {
  if (!blocks.try_reserve(heap.blocks.size())) return false;
  for (size_t i = 0; i < heap.blocks.size(); ++i) {
    uint64_t size = heap.blocks[i] == heap.array ? n * sizeof(void*) : kBlockSize;
    if (!blocks.try_add(reinterpret_cast<uintptr_t>(heap.blocks[i]), size,
                        static_cast<uint32_t>(1 + i % 64), false)) {
      return false;
    }
  }
  return true;
}

void BM_SortBlocks(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Heap heap = make_heap(n, Shape::kReachable);
  for (auto _ : state) {
    ScanBlocks blocks;
    if (!add_blocks(blocks, heap, n) || !blocks.try_sort()) state.SkipWithError("no memory");
    benchmark::DoNotOptimize(blocks.start(0));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  free_heap(heap, n);
}

void BM_Classify(benchmark::State& state, Shape shape) {
  const size_t n = static_cast<size_t>(state.range(0));
  Heap heap = make_heap(n, shape);
  uintptr_t head[1] = {reinterpret_cast<uintptr_t>(heap.head)};
  core::MmapArray<core::sys::MemoryRange> readonly;
  size_t bytes = 0;
  for (auto _ : state) {
    ScanBlocks blocks;
    ReachabilityScan scan;
    LeakReport report;
    bool ok = add_blocks(blocks, heap, n) && blocks.try_sort() && scan.try_init(blocks, readonly);
    if (ok) {
      if (shape == Shape::kReachable) {
        scan.scan_root_range(reinterpret_cast<uintptr_t>(heap.array),
                             reinterpret_cast<uintptr_t>(heap.array + n));
      } else if (shape == Shape::kList) {
        scan.scan_root_range(reinterpret_cast<uintptr_t>(head),
                             reinterpret_cast<uintptr_t>(head + 1));
      }
      ok = scan.propagate() && scan.classify_unreached() &&
           report.try_collect_classified(blocks, scan.cliques(), 64);
    }
    if (!ok) state.SkipWithError("no memory");
    bytes = blocks.bytes_used() + scan.bytes_used();
    benchmark::DoNotOptimize(report.groups().size());
  }
  state.counters["bytes_per_block"] = static_cast<double>(bytes) / static_cast<double>(n);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  free_heap(heap, n);
}

// Roots full of words that lie between the lowest and the highest block but in none, as a
// large program's own mappings between the heap's chunks hold them (cc1plus's garbage-collected
// heap): 40 clusters of 1,000 blocks, 4 MiB apart, and 1M root words pointing between them.
// The blocks are addresses only; no word finds one, so none is read.
void BM_ScanRootsBetweenClusters(benchmark::State& state) {
  constexpr uintptr_t kBase = 0x7f0000000000;
  constexpr uintptr_t kStride = uintptr_t{4} << 20;
  constexpr size_t kClusters = 40;
  constexpr size_t kPerCluster = 1000;
  std::vector<uintptr_t> roots(size_t{1} << 20);
  std::mt19937_64 rng(7);
  for (uintptr_t& word : roots) {
    word = kBase + (rng() % kClusters) * kStride + (uintptr_t{1} << 20) + (rng() % (1 << 18)) * 8;
  }
  ScanBlocks blocks;
  bool ok = blocks.try_reserve(kClusters * kPerCluster);
  for (size_t c = 0; c < kClusters; ++c) {
    for (size_t i = 0; i < kPerCluster; ++i) {
      ok = ok && blocks.try_add(kBase + c * kStride + i * kBlockSize, kBlockSize, 1, false);
    }
  }
  ok = ok && blocks.try_sort();
  core::MmapArray<core::sys::MemoryRange> readonly;
  for (auto _ : state) {
    ReachabilityScan scan;
    if (!ok || !scan.try_init(blocks, readonly)) state.SkipWithError("no memory");
    scan.scan_root_range(reinterpret_cast<uintptr_t>(roots.data()),
                         reinterpret_cast<uintptr_t>(roots.data() + roots.size()));
    benchmark::DoNotOptimize(blocks.state(0));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(roots.size()));
}

BENCHMARK(BM_SortBlocks)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Classify, reachable_array, Shape::kReachable)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Classify, lost_array, Shape::kLost)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Classify, shuffled_list, Shape::kList)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScanRootsBetweenClusters)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace memtrack::rt
