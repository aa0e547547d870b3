#include "core/stack_totals.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace memtrack::core {
namespace {

TEST(StackTotalsTest, AddsUpByIdAndKnowsTheHighest) {
  StackTotals totals;
  EXPECT_EQ(totals.highest_id(), 0u);
  EXPECT_TRUE(totals.add(0, 1, 1, 100));
  EXPECT_TRUE(totals.add(StackTotals::kShards - 1, 1, 2, 50));       // another shard: summed
  EXPECT_TRUE(totals.add(0, StackTotals::kChunkIds * 3 + 5, 1, 7));  // a chunk of its own
  EXPECT_EQ(totals.get(1).blocks, 3u);
  EXPECT_EQ(totals.get(1).bytes, 150u);
  EXPECT_EQ(totals.get(StackTotals::kChunkIds * 3 + 5).bytes, 7u);
  EXPECT_EQ(totals.get(2).blocks, 0u);                           // never added to
  EXPECT_EQ(totals.get(StackTotals::kChunkIds * 7).blocks, 0u);  // chunk never mapped
  EXPECT_EQ(totals.highest_id(), StackTotals::kChunkIds * 3 + 5);
}

TEST(StackTotalsTest, ShardsAreTakenInTurn) {
  StackTotals totals;
  for (uint32_t i = 0; i < 2 * StackTotals::kShards; ++i) {
    EXPECT_EQ(totals.next_shard(), i % StackTotals::kShards);
  }
}

TEST(StackTotalsTest, RefusesIdsOutsideTheDepots) {
  StackTotals totals;
  EXPECT_FALSE(totals.add(0, 0, 1, 1));
  EXPECT_FALSE(totals.add(0, StackDepot::kMaxStacks + 1, 1, 1));
  EXPECT_FALSE(totals.add(StackTotals::kShards, 1, 1, 1));
  EXPECT_TRUE(totals.add(0, StackDepot::kMaxStacks, 1, 1));  // the last chunk
  EXPECT_EQ(totals.get(StackDepot::kMaxStacks).blocks, 1u);
}

TEST(StackTotalsTest, ThreadsAddingToTheSameNewChunkLoseNothing) {
  StackTotals totals;
  constexpr int kThreads = 4;
  constexpr uint64_t kAdds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&totals, t] {
      uint32_t shard = totals.next_shard() % 2;  // two threads a shard: they share counters
      for (uint64_t i = 0; i < kAdds; ++i) {
        ASSERT_TRUE(totals.add(shard, static_cast<uint32_t>(1 + i % 8 + 8 * (t % 2)), 1, 10));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t blocks = 0, bytes = 0;
  for (uint32_t id = 1; id <= totals.highest_id(); ++id) {
    blocks += totals.get(id).blocks;
    bytes += totals.get(id).bytes;
  }
  EXPECT_EQ(blocks, kThreads * kAdds);
  EXPECT_EQ(bytes, 10 * kThreads * kAdds);
  EXPECT_EQ(totals.highest_id(), 16u);
}

}  // namespace
}  // namespace memtrack::core
