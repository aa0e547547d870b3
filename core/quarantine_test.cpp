#include "core/quarantine.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace memtrack::core {
namespace {

struct Ring {
  Ring(size_t capacity, size_t budget) { EXPECT_TRUE(q.init(capacity, budget)); }
  ~Ring() { q.test_only_release(); }
  Quarantine q;
};

TEST(Quarantine, OldestLeavesOnceOverBudget) {
  Ring r(16, 100);
  Quarantine::Entry out;
  for (uintptr_t i = 1; i <= 3; ++i) {
    EXPECT_FALSE(r.q.pop_if_over(&out));
    ASSERT_TRUE(r.q.push({i * 16, i * 16 - 8, 40}));
  }
  EXPECT_EQ(r.q.bytes(), 120u);  // over 100: the first leaves, then it is under
  ASSERT_TRUE(r.q.pop_if_over(&out));
  EXPECT_EQ(out.ptr, 16u);
  EXPECT_EQ(out.chunk, 8u);
  EXPECT_FALSE(r.q.pop_if_over(&out));
  EXPECT_EQ(r.q.count(), 2u);
  EXPECT_EQ(r.q.bytes(), 80u);
}

TEST(Quarantine, AFullRingRefusesAndAsksForAPop) {
  Ring r(2, 1 << 20);
  ASSERT_TRUE(r.q.push({16, 0, 1}));
  ASSERT_TRUE(r.q.push({32, 0, 1}));
  EXPECT_FALSE(r.q.push({48, 0, 1}));
  Quarantine::Entry out;
  ASSERT_TRUE(r.q.pop_if_over(&out));  // full, though under its budget
  EXPECT_EQ(out.ptr, 16u);
  ASSERT_TRUE(r.q.push({48, 0, 1}));  // wraps around the ring
  ASSERT_TRUE(r.q.pop(&out));
  EXPECT_EQ(out.ptr, 32u);
  ASSERT_TRUE(r.q.pop(&out));
  EXPECT_EQ(out.ptr, 48u);
  EXPECT_FALSE(r.q.pop(&out));
}

TEST(Quarantine, ABudgetOfZeroKeepsNothingLong) {
  Ring r(8, 0);
  ASSERT_TRUE(r.q.push({16, 0, 32}));
  Quarantine::Entry out;
  ASSERT_TRUE(r.q.pop_if_over(&out));
  EXPECT_EQ(r.q.count(), 0u);
}

TEST(Quarantine, OffRefusesEverything) {
  Quarantine q;
  Quarantine::Entry out;
  EXPECT_FALSE(q.push({16, 0, 1}));
  EXPECT_FALSE(q.pop(&out));
  EXPECT_FALSE(q.pop_if_over(&out));
}

TEST(Quarantine, ThreadsLoseNoEntry) {
  Ring r(1024, 64 * 100);
  std::atomic<size_t> popped{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Quarantine::Entry out;
      for (uintptr_t i = 0; i < 10000; ++i) {
        while (r.q.pop_if_over(&out)) popped.fetch_add(1);
        if (!r.q.push({(static_cast<uintptr_t>(t) << 32) + i * 16 + 16, 0, 64}))
          popped.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(popped.load() + r.q.count(), 40000u);
  EXPECT_LE(r.q.bytes(), 64u * 100 + 64 * 4);
}

}  // namespace
}  // namespace memtrack::core
