// The program's own allocators' blocks and pools (custom_blocks.h): blocks are recorded and
// forgotten, a pool's destruction and trim forget exactly its blocks, a renamed pool keeps
// them, and what cannot be recorded is counted.
#include "runtime/leakcheck/custom_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace memtrack::rt {
namespace {

std::vector<uintptr_t> custom_starts() {
  std::vector<uintptr_t> starts;
  for_each_custom_block([&](const core::AllocRecord& rec) { starts.push_back(rec.ptr); });
  std::sort(starts.begin(), starts.end());
  return starts;
}

// Each test uses addresses of its own (the tables are the process's).
TEST(CustomBlocks, BlocksAreRecordedResizedMovedAndForgotten) {
  const uintptr_t a = 0x7100000;
  ASSERT_TRUE(add_custom_block(a, 100, 0, 7));
  ASSERT_TRUE(add_custom_block(a + 128, 50, 0, 8));
  EXPECT_TRUE(resize_custom_block(a, 120));
  EXPECT_TRUE(move_custom_block(a + 128, a + 256, 60));
  EXPECT_FALSE(resize_custom_block(a + 128, 1));
  std::vector<uintptr_t> starts = custom_starts();
  EXPECT_NE(std::find(starts.begin(), starts.end(), a), starts.end());
  EXPECT_NE(std::find(starts.begin(), starts.end(), a + 256), starts.end());
  bool seen = false;
  for_each_custom_block([&](const core::AllocRecord& rec) {
    if (rec.ptr == a + 256) {
      seen = true;
      EXPECT_EQ(rec.size, 60u);
      EXPECT_EQ(rec.stack_id, 8u);  // the stack stays with the block
    }
  });
  EXPECT_TRUE(seen);
  EXPECT_TRUE(remove_custom_block(a));
  EXPECT_TRUE(remove_custom_block(a + 256));
  EXPECT_FALSE(remove_custom_block(a));
}

TEST(CustomBlocks, APoolsDestructionForgetsItsBlocksOnly) {
  const uintptr_t pool = 0x1234560;
  const uintptr_t other = 0x1234570;
  const uintptr_t base = 0x7200000;
  ASSERT_TRUE(create_custom_pool(pool));
  EXPECT_TRUE(custom_pool_exists(pool));
  for (uintptr_t i = 0; i < 5; ++i) ASSERT_TRUE(add_custom_block(base + 64 * i, 32, pool, 1));
  ASSERT_TRUE(add_custom_block(base + 1024, 32, other, 1));  // makes `other`
  ASSERT_TRUE(add_custom_block(base + 2048, 32, 0, 1));      // no pool
  EXPECT_TRUE(custom_pool_exists(other));
  EXPECT_EQ(destroy_custom_pool(pool), 5);
  EXPECT_FALSE(custom_pool_exists(pool));
  EXPECT_EQ(destroy_custom_pool(pool), -1);
  std::vector<uintptr_t> starts = custom_starts();
  for (uintptr_t i = 0; i < 5; ++i) {
    EXPECT_EQ(std::find(starts.begin(), starts.end(), base + 64 * i), starts.end());
  }
  EXPECT_EQ(destroy_custom_pool(other), 1);
  EXPECT_TRUE(remove_custom_block(base + 2048));
}

TEST(CustomBlocks, ATrimKeepsTheBlocksInsideTheRange) {
  const uintptr_t pool = 0x2234560;
  const uintptr_t base = 0x7300000;
  for (uintptr_t i = 0; i < 4; ++i) ASSERT_TRUE(add_custom_block(base + 64 * i, 64, pool, 1));
  // [base + 64, base + 192): the second and third blocks lie inside it.
  EXPECT_EQ(trim_custom_pool(pool, base + 64, 128), 2);
  EXPECT_EQ(destroy_custom_pool(pool), 2);
  EXPECT_EQ(trim_custom_pool(pool, base, 1), -1);
}

TEST(CustomBlocks, ARenamedPoolKeepsItsBlocks) {
  const uintptr_t from = 0x3234560;
  const uintptr_t to = 0x3234570;
  const uintptr_t base = 0x7400000;
  ASSERT_TRUE(add_custom_block(base, 16, from, 1));
  ASSERT_TRUE(add_custom_block(base + 16, 16, from, 1));
  EXPECT_TRUE(move_custom_pool(from, to));
  EXPECT_FALSE(custom_pool_exists(from));
  EXPECT_FALSE(move_custom_pool(from, to));
  EXPECT_EQ(destroy_custom_pool(to), 2);
}

TEST(CustomBlocks, WhatCannotBeRecordedIsCounted) {
  uint64_t lost = custom_blocks_lost();
  EXPECT_FALSE(add_custom_block(0x7500004, 8, 0, 1));  // not a multiple of 8
  EXPECT_FALSE(add_custom_block(0, 8, 0, 1));
  EXPECT_EQ(custom_blocks_lost(), lost + 2);
}

}  // namespace
}  // namespace memtrack::rt
