// The fast unwinder's per-thread memo (stack_memo.h): an unchanged stack is reused; a stack
// that differs in one loaded word (another caller at the same sp) is walked again and kept
// beside the first; another depth limit or a rule generation that moved on is walked again,
// with libgcc's frames.
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

// As many callers as the memo has ways, all calling capture() at the same sp: one set of the
// memo must keep every one of their stacks.
template <int kCaller>
__attribute__((noipa)) void via(Capture* out, int max) {
  capture(out, max);
  __asm__ volatile("" ::: "memory");
}

template <int... kCallers>
constexpr auto make_vias(std::integer_sequence<int, kCallers...> /*callers*/) {
  return std::array<void (*)(Capture*, int), sizeof...(kCallers)>{via<kCallers>...};
}
constexpr auto kVias = make_vias(std::make_integer_sequence<int, kMemoWays>{});

// One call site for every caller, so the captures differ only in the caller.
__attribute__((noipa)) void run_via(Capture* out, int caller) {
  kVias[static_cast<size_t>(caller)](out, kMaxFrames);
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
  // and kept in another way of the same set. From then on both callers' stacks are reused
  // as they alternate (the fourth compares via_a's entry first: one more rejection).
  EXPECT_EQ(before[2].rejected, before[1].rejected + 1);
  EXPECT_EQ(before[2].stored, before[1].stored + 1);
  EXPECT_EQ(after.hits, before[2].hits + 2);
  EXPECT_EQ(after.stored, before[2].stored);
  EXPECT_EQ(after.rejected, before[2].rejected + 1);
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

TEST(StackMemo, AsManyCallersAsWaysAtOneSpAreAllKept) {
  // In a thread of its own: a memo with no entry of the other tests in the set.
  std::thread thread([] {
    Capture c[2][kMemoWays];
    StackMemoStats after_round[2];
    // Two rounds of the callers in turn, from one call site. In the second, each stack must be
    // found in its own way (a set with one way too few would evict each entry just before it
    // is wanted). A count the compiler cannot see, so it does not peel the rounds into two
    // call sites.
    volatile int rounds = 2;
    for (int round = 0; round < rounds; ++round) {
      for (int i = 0; i < kMemoWays; ++i) run_via(&c[round][i], i);
      after_round[round] = stack_memo_stats();
    }
    EXPECT_EQ(after_round[0].stored, static_cast<uint64_t>(kMemoWays));
    EXPECT_EQ(after_round[0].hits, 0u);
    EXPECT_EQ(after_round[1].hits, static_cast<uint64_t>(kMemoWays));
    EXPECT_EQ(after_round[1].stored, after_round[0].stored);
    const Capture* first = c[0];
    const Capture* again = c[1];
    for (int i = 0; i < kMemoWays; ++i) {
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
