// The fast unwinder's per-thread memo (stack_memo.h): an unchanged stack is reused; a stack
// that differs in one loaded word (another caller at the same sp) is walked again and kept in
// the same tree; hundreds of callers at one sp are all kept; a full memo evicts leaves and a
// full set whole trees, and every stack stays libgcc's; another depth limit or a rule
// generation that moved on is walked again, with libgcc's frames.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <thread>
#include <utility>

#include "core/stack_depot.h"
#include "runtime/unwind/fast_unwind.h"
#include "runtime/unwind/stack_memo.h"

namespace memtrack::rt {
namespace {

constexpr int kMaxFrames = 64;

core::StackDepot* depot() {
  static auto* depot = new core::StackDepot();
  return depot;
}

struct Capture {
  int depth = 0;
  uint32_t id = 0;
  uintptr_t frames[kMaxFrames] = {};
  int reference_depth = 0;
  uintptr_t reference[kMaxFrames] = {};
};

// noipa: never inlined, cloned or folded with an identical function, so via_a and via_b stay
// two callers with equal frames and capture() runs at the same sp under either.
__attribute__((noipa)) void capture(Capture* out, int max) {
  out->depth = fast_unwind_interned(out->frames, max, depot(), &out->id);
  out->reference_depth = reference_unwind(out->reference, max);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) void via_a(Capture* out, int max) {
  capture(out, max);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) void via_b(Capture* out, int max) {
  capture(out, max);
  __asm__ volatile("" ::: "memory");
}

// Every capture of a test comes through here, from one call site in a loop, so captures
// differ only where the test makes them differ.
__attribute__((noipa)) void run(Capture* out, bool through_b, int max, bool forget_rules = false) {
  if (forget_rules) forget_unwind_rules();
  if (through_b) {
    via_b(out, max);
  } else {
    via_a(out, max);
  }
  __asm__ volatile("" ::: "memory");
}

// Many callers, all calling capture() at the same sp: one key, whose tree must keep every one
// of their stacks.
constexpr int kCallers = 64;

template <int kCaller>
__attribute__((noipa)) void via(Capture* out, int max) {
  capture(out, max);
  __asm__ volatile("" ::: "memory");
}

template <int... kCallerIndex>
constexpr auto make_vias(std::integer_sequence<int, kCallerIndex...> /*callers*/) {
  return std::array<void (*)(Capture*, int), sizeof...(kCallerIndex)>{via<kCallerIndex>...};
}
constexpr auto kVias = make_vias(std::make_integer_sequence<int, kCallers>{});

// One call site for every caller, so the captures differ only in the caller.
__attribute__((noipa)) void run_via(Capture* out, int caller, int max = kMaxFrames) {
  kVias[static_cast<size_t>(caller)](out, max);
  __asm__ volatile("" ::: "memory");
}

// A second level of callers above run_via: kCallers x kCallers stacks of one key, more than
// the memo holds.
template <int kOuter>
__attribute__((noipa)) void outer(Capture* out, int caller) {
  run_via(out, caller);
  __asm__ volatile("" ::: "memory");
}
template <int... kOuterIndex>
constexpr auto make_outers(std::integer_sequence<int, kOuterIndex...> /*callers*/) {
  return std::array<void (*)(Capture*, int), sizeof...(kOuterIndex)>{outer<kOuterIndex>...};
}
constexpr auto kOuters = make_outers(std::make_integer_sequence<int, kCallers>{});

__attribute__((noipa)) void run_outer(Capture* out, int outer_caller, int caller) {
  kOuters[static_cast<size_t>(outer_caller)](out, caller);
  __asm__ volatile("" ::: "memory");
}

// `levels` frames deeper, then a caller: each depth its own sp, so its own key.
__attribute__((noipa)) void descend(Capture* out, int levels, int caller, int max) {
  if (levels > 0) {
    descend(out, levels - 1, caller, max);
  } else {
    run_via(out, caller, max);
  }
  __asm__ volatile("" ::: "memory");
}

// The fast stack is libgcc's, which also has the frame inside reference_unwind first.
void expect_libgcc_stack(const Capture& c) {
  ASSERT_GT(c.depth, 3);
  ASSERT_EQ(c.depth + 1, c.reference_depth);
  // frames[0] returns into capture() after fast_unwind_interned, reference[1] after
  // reference_unwind: two call sites.
  for (int i = 1; i < c.depth; ++i) EXPECT_EQ(c.frames[i], c.reference[i + 1]) << "frame " << i;
}

void expect_same_stack(const Capture& a, const Capture& b) {
  ASSERT_EQ(a.depth, b.depth);
  for (int i = 0; i < a.depth; ++i) EXPECT_EQ(a.frames[i], b.frames[i]) << "frame " << i;
  EXPECT_EQ(a.id, b.id);
}

TEST(StackMemo, ReusesAnUnchangedStack) {
  Capture c[3];
  StackMemoStats before[3];
  for (int i = 0; i < 3; ++i) {
    before[i] = stack_memo_stats();
    run(&c[i], false, kMaxFrames);
  }
  StackMemoStats after = stack_memo_stats();
  EXPECT_EQ(before[1].stored, before[0].stored + 1);
  EXPECT_EQ(before[1].hits, before[0].hits);
  EXPECT_EQ(after.hits, before[1].hits + 2);
  EXPECT_EQ(after.stored, before[1].stored);
  for (const Capture& capture : c) expect_libgcc_stack(capture);
  expect_same_stack(c[0], c[1]);
  expect_same_stack(c[0], c[2]);
  EXPECT_NE(c[0].id, core::StackDepot::kInvalidId);
}

TEST(StackMemo, AnotherCallerAtTheSameSpIsWalkedOnceAndKeptBeside) {
  Capture c[4];
  StackMemoStats before[4];
  for (int i = 0; i < 4; ++i) {
    before[i] = stack_memo_stats();
    run(&c[i], i % 2 == 1, kMaxFrames);
  }
  StackMemoStats after = stack_memo_stats();
  // The second capture has the first frame and sp of the first one's entry (the memo
  // compared its words) but the return address into via_b, not via_a: it is walked again,
  // and kept as a child of via_a's entry at that word. From then on both callers' stacks are
  // reused as they alternate, with no rejection: the fourth goes from via_a's entry to the
  // child whose word holds via_b's return address.
  EXPECT_EQ(before[2].rejected, before[1].rejected + 1);
  EXPECT_EQ(before[2].stored, before[1].stored + 1);
  EXPECT_EQ(after.hits, before[2].hits + 2);
  EXPECT_EQ(after.stored, before[2].stored);
  EXPECT_EQ(after.rejected, before[2].rejected);
  for (const Capture& capture : c) expect_libgcc_stack(capture);
  EXPECT_EQ(c[1].frames[0], c[0].frames[0]);
  EXPECT_NE(c[1].frames[1], c[0].frames[1]);
  EXPECT_NE(c[1].id, c[0].id);
  expect_same_stack(c[0], c[2]);
  expect_same_stack(c[1], c[3]);
}

TEST(StackMemo, AnotherDepthLimitIsWalkedAgain) {
  Capture c[3];
  int limits[3] = {kMaxFrames, kMaxFrames, 2};
  StackMemoStats before[3];
  for (int i = 0; i < 3; ++i) {
    before[i] = stack_memo_stats();
    run(&c[i], false, limits[i]);
  }
  EXPECT_EQ(stack_memo_stats().hits, before[2].hits);
  EXPECT_EQ(c[2].depth, 2);
  EXPECT_EQ(c[2].frames[1], c[0].frames[1]);
  EXPECT_NE(c[2].id, c[0].id);
}

TEST(StackMemo, ForgottenRulesAreNotReused) {
  Capture c[3];
  StackMemoStats before[3];
  for (int i = 0; i < 3; ++i) {
    before[i] = stack_memo_stats();
    run(&c[i], false, kMaxFrames, i == 2);
  }
  StackMemoStats after = stack_memo_stats();
  EXPECT_EQ(before[2].hits, before[1].hits + 1);
  // The entry is of an older generation: not even compared.
  EXPECT_EQ(after.hits, before[2].hits);
  EXPECT_EQ(after.rejected, before[2].rejected);
  EXPECT_EQ(after.stored, before[2].stored + 1);
  expect_libgcc_stack(c[2]);
  expect_same_stack(c[0], c[2]);
}

TEST(StackMemo, ManyCallersAtOneSpAreAllKept) {
  // In a thread of its own: a memo with no entry of the other tests.
  std::thread thread([] {
    Capture c[2][kCallers];
    StackMemoStats after_round[2];
    // Two rounds of the callers in turn, from one call site: in the second, every stack is
    // found in the key's tree. A count the compiler cannot see, so it does not peel the
    // rounds into two call sites.
    volatile int rounds = 2;
    for (int round = 0; round < rounds; ++round) {
      for (int i = 0; i < kCallers; ++i) run_via(&c[round][i], i);
      after_round[round] = stack_memo_stats();
    }
    EXPECT_EQ(after_round[0].stored, static_cast<uint64_t>(kCallers));
    EXPECT_EQ(after_round[0].hits, 0u);
    EXPECT_EQ(after_round[0].rejected, static_cast<uint64_t>(kCallers - 1));
    EXPECT_EQ(after_round[1].hits, static_cast<uint64_t>(kCallers));
    EXPECT_EQ(after_round[1].stored, after_round[0].stored);
    EXPECT_EQ(after_round[1].rejected, after_round[0].rejected);
    const Capture* first = c[0];
    const Capture* again = c[1];
    for (int i = 0; i < kCallers; ++i) {
      expect_libgcc_stack(again[i]);
      expect_same_stack(first[i], again[i]);
      EXPECT_EQ(first[i].frames[0], first[0].frames[0]);
      if (i > 0) {
        EXPECT_NE(first[i].id, first[i - 1].id);
      }
    }
  });
  thread.join();
}

TEST(StackMemo, AFullMemoEvictsLeavesAndStaysExact) {
  std::thread thread([] {
    // 4,096 stacks of one key, four times what the memo holds: every walk is kept in the
    // place of a leaf, and every stack, walked or reused, is libgcc's. Then the last 64 again,
    // through the same call site: the last ones stored are the last the clock would evict, so
    // all are reused.
    constexpr int kAll = kCallers * kCallers;
    Capture capture;
    Capture last[kCallers];
    StackMemoStats full;
    // Bounds the compiler cannot see, so it does not split the loop into two call sites.
    volatile int all = kAll;
    volatile int total = kAll + kCallers;
    for (int n = 0; n < total; ++n) {
      if (n == all) full = stack_memo_stats();
      int stack = n < all ? n : all - kCallers + (n - all);
      run_outer(&capture, stack / kCallers, stack % kCallers);
      expect_libgcc_stack(capture);
      if (n >= kAll - kCallers && n < kAll) last[n % kCallers] = capture;
      if (n >= kAll) expect_same_stack(last[n % kCallers], capture);
    }
    EXPECT_EQ(full.stored, static_cast<uint64_t>(kAll));
    EXPECT_EQ(full.hits, 0u);
    EXPECT_EQ(stack_memo_stats().hits, static_cast<uint64_t>(kCallers));
    EXPECT_EQ(stack_memo_stats().stored, full.stored);
  });
  thread.join();
}

TEST(StackMemo, AFullSetGivesAWayAndItsWholeTreeToANewKey) {
  std::thread thread([] {
    // 500 keys (one per depth) over the memo's 64 sets of 8 ways, two stacks each: sets run
    // out of ways, and the trees of the keys they evict are freed and their entries reused.
    // Stacks of 8 frames, so that deep ones are kept too.
    constexpr int kDepths = 500;
    constexpr int kPerKey = 2;
    constexpr int kMax = 8;
    Capture capture;
    volatile int rounds = 2;
    for (int round = 0; round < rounds; ++round) {
      for (int levels = 0; levels < kDepths; ++levels) {
        for (int caller = 0; caller < kPerKey; ++caller) {
          descend(&capture, levels, caller, kMax);
          ASSERT_EQ(capture.depth, kMax);
          ASSERT_EQ(capture.reference_depth, kMax);
          for (int i = 1; i < kMax - 1; ++i) {
            ASSERT_EQ(capture.frames[i], capture.reference[i + 1]) << "frame " << i;
          }
        }
      }
    }
    StackMemoStats stats = stack_memo_stats();
    // Every walk kept; keys that kept their way were reused in the second round.
    EXPECT_EQ(stats.stored + stats.hits, 2u * kDepths * kPerKey);
    EXPECT_GT(stats.hits, 0u);
    EXPECT_GT(stats.stored, static_cast<uint64_t>(kDepths) * kPerKey);
  });
  thread.join();
}

TEST(StackMemo, EachThreadHasItsOwnAndItsCountsOutliveIt) {
  StackMemoStats before = stack_memo_totals();
  std::thread thread([] {
    Capture c[3];
    for (Capture& capture : c) run(&capture, false, kMaxFrames);
    // A memo of its own: the main thread's entries are not this thread's stacks.
    EXPECT_EQ(stack_memo_stats().stored, 1u);
    EXPECT_EQ(stack_memo_stats().hits, 2u);
    expect_same_stack(c[0], c[2]);
  });
  thread.join();
  // Its memo was unmapped at its exit, and its counts added to the process's.
  StackMemoStats after = stack_memo_totals();
  EXPECT_EQ(after.hits, before.hits + 2);
  EXPECT_EQ(after.stored, before.stored + 1);
}

}  // namespace
}  // namespace memtrack::rt
