#include "core/quarantine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace memtrack::core {
namespace {

struct Ring {
  Ring(size_t capacity, size_t budget) { EXPECT_TRUE(q.init(capacity, budget)); }
  ~Ring() { q.test_only_release(); }
  // One free's turn: the entries that left, or, if `e` found no room, `e` last.
  std::vector<Quarantine::Entry> free(const Quarantine::Entry& e, size_t max = 8) {
    Quarantine::Entry out[8];
    bool pushed = false;
    size_t taken = q.push_taking_over(e, out, max, &pushed);
    std::vector<Quarantine::Entry> left(out, out + taken);
    if (!pushed) left.push_back(e);
    return left;
  }
  Quarantine q;
};

TEST(Quarantine, OldestLeavesOnceOverBudget) {
  Ring r(16, 100);
  for (uintptr_t i = 1; i <= 3; ++i) EXPECT_TRUE(r.free({i * 16, i * 16 - 8, 40}).empty());
  EXPECT_EQ(r.q.bytes(), 120u);  // over 100: at the next free the first leaves
  std::vector<Quarantine::Entry> left = r.free({64, 56, 40});
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].ptr, 16u);
  EXPECT_EQ(left[0].chunk, 8u);
  EXPECT_EQ(r.q.count(), 3u);
  EXPECT_EQ(r.q.bytes(), 120u);
}

TEST(Quarantine, ABigBlockPushesOutSeveral) {
  Ring r(16, 100);
  for (uintptr_t i = 1; i <= 3; ++i) EXPECT_TRUE(r.free({i * 16, 0, 30}).empty());
  EXPECT_TRUE(r.free({64, 0, 90}).empty());  // 90 before it: under the budget
  EXPECT_EQ(r.q.bytes(), 180u);
  std::vector<Quarantine::Entry> left = r.free({80, 0, 10});
  ASSERT_EQ(left.size(), 3u);  // 180 -> 150 -> 120 -> 90
  EXPECT_EQ(left[0].ptr, 16u);
  EXPECT_EQ(left[2].ptr, 48u);
  EXPECT_EQ(r.q.bytes(), 100u);
}

TEST(Quarantine, AFullRingMakesRoomAndWraps) {
  Ring r(2, 1 << 20);
  EXPECT_TRUE(r.free({16, 0, 1}).empty());
  EXPECT_TRUE(r.free({32, 0, 1}).empty());
  std::vector<Quarantine::Entry> left = r.free({48, 0, 1});  // full, though under its budget
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].ptr, 16u);
  Quarantine::Entry out;
  ASSERT_TRUE(r.q.pop(&out));
  EXPECT_EQ(out.ptr, 32u);
  ASSERT_TRUE(r.q.pop(&out));
  EXPECT_EQ(out.ptr, 48u);  // wrapped around the ring
  EXPECT_FALSE(r.q.pop(&out));
}

TEST(Quarantine, NoRoomWithinMaxGivesTheBlockBack) {
  Ring r(2, 1 << 20);
  EXPECT_TRUE(r.free({16, 0, 1}).empty());
  EXPECT_TRUE(r.free({32, 0, 1}).empty());
  std::vector<Quarantine::Entry> left = r.free({48, 0, 1}, 0);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].ptr, 48u);
  EXPECT_EQ(r.q.count(), 2u);
}

TEST(Quarantine, ABudgetOfZeroKeepsOneBlock) {
  Ring r(8, 0);
  EXPECT_TRUE(r.free({16, 0, 32}).empty());
  std::vector<Quarantine::Entry> left = r.free({32, 0, 32});
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].ptr, 16u);
  EXPECT_EQ(r.q.count(), 1u);
}

TEST(Quarantine, OffRefusesEverything) {
  Quarantine q;
  Quarantine::Entry out[1];
  bool pushed = true;
  EXPECT_EQ(q.push_taking_over({16, 0, 1}, out, 1, &pushed), 0u);
  EXPECT_FALSE(pushed);
  EXPECT_FALSE(q.pop(out));
}

TEST(Quarantine, ThreadsLoseNoEntry) {
  Ring r(1024, 64 * 100);
  std::atomic<size_t> left{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (uintptr_t i = 0; i < 10000; ++i) {
        left.fetch_add(r.free({(static_cast<uintptr_t>(t) << 32) + i * 16 + 16, 0, 64}).size());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(left.load() + r.q.count(), 40000u);
  EXPECT_LE(r.q.bytes(), 64u * 100 + 64);
}

}  // namespace
}  // namespace memtrack::core
