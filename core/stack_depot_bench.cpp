// Google Benchmark: stack-depot intern of known stacks (the hot path) and of new stacks.
#include <benchmark/benchmark.h>

#include "core/stack_depot.h"

namespace memtrack::core {
namespace {

StackDepot* shared_depot() {
  static StackDepot* depot = new StackDepot();
  return depot;
}

void make_stack(uintptr_t seed, uintptr_t* frames, uint32_t depth) {
  for (uint32_t i = 0; i < depth; ++i) frames[i] = 0x400000 + seed * 977 + i * 64;
}

// A program has a few thousand allocation sites; after warm-up nearly every intern is a hit.
void BM_InternKnown(benchmark::State& state) {
  StackDepot* depot = shared_depot();
  const auto depth = static_cast<uint32_t>(state.range(0));
  uintptr_t frames[64];
  for (uintptr_t s = 0; s < 2048; ++s) {
    make_stack(s, frames, depth);
    depot->intern(frames, depth);
  }
  uintptr_t s = 0;
  for (auto _ : state) {
    make_stack(s++ % 2048, frames, depth);
    benchmark::DoNotOptimize(depot->intern(frames, depth));
  }
}
BENCHMARK(BM_InternKnown)->Arg(10)->Arg(32)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

void BM_InternNew(benchmark::State& state) {
  StackDepot* depot = shared_depot();
  uintptr_t frames[32];
  uintptr_t s = 1'000'000 + static_cast<uintptr_t>(state.thread_index()) * 100'000'000;
  for (auto _ : state) {
    make_stack(s++, frames, 32);
    benchmark::DoNotOptimize(depot->intern(frames, 32));
  }
}
BENCHMARK(BM_InternNew)->Iterations(200000);

}  // namespace
}  // namespace memtrack::core
