// Google Benchmark: one stack capture at call depth 10 and 30 with the fast unwinder (cached
// DWARF rules), libgcc's _Unwind_Backtrace (the reference) and glibc's backtrace(), then a
// capture plus the stack-depot lookup of the (known) stack, at 1, 2 and 4 threads, and the
// same through the per-thread memo of unchanged stacks (fast_unwind_interned: the words the
// walk loaded are compared instead of walking, no depot lookup), also with eight stacks in one
// set of the memo.
// This file is built -O2 without frame pointers, like the programs memtrack runs.
#include <benchmark/benchmark.h>
#include <execinfo.h>

#include <array>
#include <utility>

#include "core/stack_depot.h"
#include "runtime/unwind/fast_unwind.h"

namespace memtrack::rt {
namespace {

constexpr int kMaxFrames = 64;

enum class Unwinder { kFast, kLibgcc, kGlibcBacktrace, kFastAndDepot, kMemo };

core::StackDepot* shared_depot() {
  static auto* depot = new core::StackDepot();
  return depot;
}

// The hooks' depth limit by default (max_frames): deeper stacks are cut there, and the memo
// keeps stacks of up to that many frames.
constexpr int kHookMaxFrames = 32;

__attribute__((noinline)) void capture_loop(benchmark::State& state, Unwinder unwinder,
                                            int memo_max) {
  uintptr_t frames[kMaxFrames];
  void* glibc_frames[kMaxFrames];
  for (auto _ : state) {
    int depth = 0;
    uint64_t hash = 0;
    switch (unwinder) {
      case Unwinder::kFast:
        depth = fast_unwind(frames, kMaxFrames, &hash);
        break;
      case Unwinder::kLibgcc:
        depth = reference_unwind(frames, kMaxFrames);
        break;
      case Unwinder::kGlibcBacktrace:
        depth = backtrace(glibc_frames, kMaxFrames);
        break;
      case Unwinder::kFastAndDepot:
        depth = fast_unwind(frames, kMaxFrames, &hash);
        benchmark::DoNotOptimize(
            shared_depot()->intern_hashed(frames, static_cast<uint32_t>(depth), hash));
        break;
      case Unwinder::kMemo: {
        uint32_t id = 0;
        depth = fast_unwind_interned(frames, memo_max, shared_depot(), &id);
        benchmark::DoNotOptimize(id);
        break;
      }
    }
    benchmark::DoNotOptimize(depth);
  }
  state.SetItemsProcessed(state.iterations());
}

// Recurses `depth` - 1 times before measuring, so the stack has depth frames plus the
// benchmark harness's, thread start and main ones below.
__attribute__((noinline)) void at_depth(int depth, benchmark::State& state, Unwinder unwinder,
                                        int memo_max = kHookMaxFrames) {
  if (depth > 1) {
    at_depth(depth - 1, state, unwinder, memo_max);
    __asm__ volatile("" ::: "memory");  // keeps the recursion from becoming a loop
    return;
  }
  capture_loop(state, unwinder, memo_max);
}

void BM_Capture(benchmark::State& state) {
  at_depth(static_cast<int>(state.range(0)), state, static_cast<Unwinder>(state.range(1)));
}

void unwinder_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"depth", "unwinder"});
  for (int depth : {10, 30}) {
    for (Unwinder u : {Unwinder::kFast, Unwinder::kLibgcc, Unwinder::kGlibcBacktrace}) {
      b->Args({depth, static_cast<int64_t>(u)});
    }
  }
}
// unwinder: 0 = fast (cached rules), 1 = libgcc _Unwind_Backtrace, 2 = glibc backtrace().
BENCHMARK(BM_Capture)->Apply(unwinder_args);

void BM_CaptureAndIntern(benchmark::State& state) {
  at_depth(static_cast<int>(state.range(0)), state, Unwinder::kFastAndDepot);
}
BENCHMARK(BM_CaptureAndIntern)->Arg(10)->Arg(30)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// The hooks' path: the memo first, the walk and the depot when a loaded word changed. With
// max 32 (the hooks' default) both depths are reused; with max 64 the depth-30 stack (about
// 40 frames) is too deep to keep, so that row is the cost of a walk the memo records and drops.
void BM_CaptureMemoized(benchmark::State& state) {
  at_depth(static_cast<int>(state.range(0)), state, Unwinder::kMemo,
           static_cast<int>(state.range(1)));
}
BENCHMARK(BM_CaptureMemoized)
    ->ArgNames({"depth", "max"})
    ->Args({10, kHookMaxFrames})
    ->Args({30, kHookMaxFrames})
    ->Args({30, kMaxFrames})
    ->Threads(1)
    ->Threads(4)
    ->UseRealTime();

// A memo set holding several stacks: eight callers of one capturing function, in turn. The
// memo's key is the first frame's pc and stack pointer, the same under every caller, so
// their eight stacks share one set and fill its ways; each lookup passes over the others'
// ways to its own (their pcs, in the set's line of pcs) and checks its own entry's words.
__attribute__((noipa)) void capture_once(uint32_t* id) {
  benchmark::DoNotOptimize(fast_unwind_interned(nullptr, kHookMaxFrames, shared_depot(), id));
  __asm__ volatile("" ::: "memory");
}

template <int kCaller>
__attribute__((noipa)) void capture_via(uint32_t* id) {
  capture_once(id);
  __asm__ volatile("" ::: "memory");
}

template <int... kCallers>
constexpr auto make_callers(std::integer_sequence<int, kCallers...> /*callers*/) {
  return std::array<void (*)(uint32_t*), sizeof...(kCallers)>{capture_via<kCallers>...};
}
constexpr int kCallersInOneSet = 8;  // the memo's ways (stack_memo.h)
constexpr auto kCallers = make_callers(std::make_integer_sequence<int, kCallersInOneSet>{});

void BM_CaptureMemoizedCallers(benchmark::State& state) {
  uint32_t id = 0;
  StackMemoStats before = stack_memo_stats();
  for (auto _ : state) {
    for (auto* caller : kCallers) caller(&id);  // one call site: the callers differ only in frame 1
  }
  benchmark::DoNotOptimize(id);
  StackMemoStats after = stack_memo_stats();
  uint64_t captures = state.iterations() * kCallersInOneSet;
  state.SetItemsProcessed(static_cast<int64_t>(captures));
  // The share of captures the memo answered: 1 unless the set failed to keep the stacks.
  state.counters["reused"] =
      static_cast<double>(after.hits - before.hits) / static_cast<double>(captures);
}
BENCHMARK(BM_CaptureMemoizedCallers);

}  // namespace
}  // namespace memtrack::rt
