// Unit tests of the scan's block array: the radix sort, the packing and the lookups, against
// plain searches of the same blocks.
#include "runtime/leakcheck/scan_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace memtrack::rt {
namespace {

struct Block {
  uintptr_t start;
  uint64_t size;
  uint32_t stack_id;
  bool ignored;
};

// Non-overlapping blocks at `count` random 16-byte slots of [base, base + span), in random
// order, with sizes up to the next slot's start.
std::vector<Block> random_blocks(size_t count, uintptr_t base, uint64_t span, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uintptr_t> starts;
  while (starts.size() < count) {
    for (size_t i = starts.size(); i < count; ++i)
      starts.push_back(base + (rng() % (span / 16)) * 16);
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  }
  std::vector<Block> blocks;
  for (size_t i = 0; i < starts.size(); ++i) {
    uint64_t room = i + 1 < starts.size() ? starts[i + 1] - starts[i] : 4096;
    uint64_t size = rng() % 8 == 0 ? 0 : 1 + rng() % room;
    blocks.push_back(
        Block{starts[i], size, static_cast<uint32_t>(rng() % (1u << 24)), rng() % 5 == 0});
  }
  std::shuffle(blocks.begin(), blocks.end(), rng);
  return blocks;
}

// Adds `blocks`, sorts, and checks every record against the same blocks sorted by std::sort.
void check_sorted(ScanBlocks& scan, std::vector<Block> blocks) {
  for (const Block& b : blocks) {
    ASSERT_TRUE(scan.try_add(b.start, b.size, b.stack_id, b.ignored));
  }
  ASSERT_TRUE(scan.try_sort());
  std::sort(blocks.begin(), blocks.end(),
            [](const Block& a, const Block& b) { return a.start < b.start; });
  ASSERT_EQ(scan.size(), blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    ASSERT_EQ(scan.start(i), blocks[i].start) << i;
    ASSERT_EQ(scan.size_of(i), blocks[i].size) << i;
    ASSERT_EQ(scan.stack_id(i), blocks[i].stack_id) << i;
    ASSERT_EQ(scan.ignored(i), blocks[i].ignored) << i;
    ASSERT_EQ(scan.state(i), BlockState::kUnreached) << i;
  }
}

// find and first_at against linear searches, at every block's edges and at random addresses.
void check_lookups(const ScanBlocks& scan, uint32_t seed) {
  auto naive_find = [&](uintptr_t address) {
    for (size_t i = 0; i < scan.size(); ++i) {
      if (address >= scan.start(i) && address - scan.start(i) < scan.extent(i)) {
        return static_cast<long>(i);
      }
    }
    return -1L;
  };
  auto naive_first_at = [&](uintptr_t address) {
    size_t i = 0;
    while (i < scan.size() && scan.start(i) < address) ++i;
    return i;
  };
  std::vector<uintptr_t> probes = {0, 1, UINTPTR_MAX, scan.lowest(), scan.highest()};
  for (size_t i = 0; i < scan.size(); i += 1 + scan.size() / 300) {
    uintptr_t s = scan.start(i);
    for (uintptr_t p : {s - 1, s, s + 1, s + scan.extent(i) - 1, s + scan.extent(i)}) {
      probes.push_back(p);
    }
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 300; ++i) {
    probes.push_back(scan.lowest() + rng() % (scan.highest() - scan.lowest() + 64));
  }
  const ScanBlocks::Filter filter = scan.filter();
  for (uintptr_t p : probes) {
    ASSERT_EQ(scan.find(p), naive_find(p)) << std::hex << p;
    if (!filter.may_hold(p)) {
      ASSERT_EQ(naive_find(p), -1) << std::hex << p;
    }
    ASSERT_EQ(scan.first_at(p), naive_first_at(p)) << std::hex << p;
  }
}

TEST(ScanBlocksTest, EmptyArrayFindsNothing) {
  ScanBlocks scan;
  ASSERT_TRUE(scan.try_sort());
  EXPECT_EQ(scan.find(0x1000), -1);
  EXPECT_EQ(scan.first_at(0x1000), 0u);
  EXPECT_EQ(scan.lowest(), 0u);
  EXPECT_EQ(scan.highest(), 0u);
}

TEST(ScanBlocksTest, SortsADenseHeap) {
  ScanBlocks scan;
  check_sorted(scan, random_blocks(20000, 0x555555550000, 20000 * 48, 1));
  check_lookups(scan, 2);
}

TEST(ScanBlocksTest, SortsBlocksSpreadOverTheWholeAddressSpace) {
  ScanBlocks scan;
  check_sorted(scan, random_blocks(5000, 0x10000, uint64_t{1} << 46, 3));
  check_lookups(scan, 4);
}

TEST(ScanBlocksTest, SortsAHeapAndMmappedBlocksFarAbove) {
  std::vector<Block> blocks = random_blocks(3000, 0x555555550000, 3000 * 64, 5);
  std::vector<Block> high = random_blocks(300, 0x7f0000000000, 300 * 0x20000, 6);
  blocks.insert(blocks.end(), high.begin(), high.end());
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937_64(7));
  ScanBlocks scan;
  check_sorted(scan, blocks);
  check_lookups(scan, 8);
}

// What a large program's roots hold most: pointers into its own mappings between the heap's
// chunks. The filter turns nearly all of them away without a lookup, and never a word in a block.
TEST(ScanBlocksTest, FilterTurnsAwayWordsBetweenFarApartClusters) {
  std::vector<Block> blocks;
  for (uintptr_t base : {uintptr_t{0x7f0000000000}, uintptr_t{0x7f0040000000}}) {
    std::vector<Block> cluster = random_blocks(500, base, 500 * 64, 12);
    blocks.insert(blocks.end(), cluster.begin(), cluster.end());
  }
  ScanBlocks scan;
  check_sorted(scan, blocks);
  check_lookups(scan, 13);
  const ScanBlocks::Filter filter = scan.filter();
  for (size_t i = 0; i < scan.size(); ++i) {
    ASSERT_TRUE(filter.may_hold(scan.start(i) + scan.extent(i) - 1)) << i;
  }
  size_t passed = 0;
  const size_t probes = 1000;  // one word in each MiB of the GiB between the two clusters
  for (size_t mib = 1; mib <= probes; ++mib) {
    const uintptr_t word = 0x7f0000000000 + (uintptr_t{mib} << 20) + 0x1234;
    if (filter.may_hold(word)) ++passed;
  }
  EXPECT_LE(passed, probes / 100);
  EXPECT_FALSE(filter.may_hold(0x7f0000000000 - 8));
  EXPECT_FALSE(filter.may_hold(scan.highest()));
}

TEST(ScanBlocksTest, KeepsAnAlreadySortedArrayAndAFewBlocks) {
  std::vector<Block> blocks = random_blocks(1000, 0x1000000, 1000 * 32, 9);
  std::sort(blocks.begin(), blocks.end(),
            [](const Block& a, const Block& b) { return a.start < b.start; });
  ScanBlocks sorted;
  check_sorted(sorted, blocks);
  check_lookups(sorted, 10);
  ScanBlocks few;
  check_sorted(few, {{0x3000, 8, 1, false}, {0x1000, 0, 2, true}, {0x2000, 16, 3, false}});
  check_lookups(few, 11);
  EXPECT_EQ(few.find(0x1000), 0);
  EXPECT_EQ(few.find(0x1001), -1);  // a zero-size block covers one byte
  EXPECT_EQ(few.find(0x2008), 1);
  EXPECT_EQ(few.find(0x3008), -1);  // one past the end
}

// The heap's blocks come in address order, the allocation table's after them in none: the
// tail is sorted on its own and merged in (with blocks below and above the run), and
// a tail of more than a quarter is sorted with the rest as usual.
TEST(ScanBlocksTest, MergesBlocksAddedAfterASortedRun) {
  for (size_t tail : {size_t{1}, size_t{37}, size_t{500}, size_t{1500}}) {
    std::vector<Block> run = random_blocks(4000, 0x7f0000000000, 4000 * 64, 20);
    std::sort(run.begin(), run.end(),
              [](const Block& a, const Block& b) { return a.start < b.start; });
    std::vector<Block> blocks = run;
    std::vector<Block> others = random_blocks(tail, 0x7f0000000000 + 4000 * 64 + 4096,
                                              tail * 0x1000, 21 + static_cast<uint32_t>(tail));
    for (size_t i = 0; i < others.size(); ++i) {
      // Some below the run, some above: the merge must take from both ends.
      if (i % 3 == 0) others[i].start -= 0x100000000;
      blocks.push_back(others[i]);
    }
    ScanBlocks scan;
    check_sorted(scan, blocks);
    check_lookups(scan, 22);
  }
}

TEST(ScanBlocksTest, KeepsSizesOfATebibyteAndMore) {
  ScanBlocks scan;
  const uint64_t huge = (uint64_t{1} << 40) + 12345;
  ASSERT_TRUE(scan.try_add(0x7f0000000000, huge, 7, false));
  ASSERT_TRUE(scan.try_add(0x10000, (uint64_t{1} << 40) - 1, 8, false));
  ASSERT_TRUE(scan.try_add(0x20000, 32, 9, false));
  ASSERT_TRUE(scan.try_sort());
  EXPECT_EQ(scan.size_of(0), (uint64_t{1} << 40) - 1);
  EXPECT_EQ(scan.size_of(1), 32u);
  EXPECT_EQ(scan.size_of(2), huge);
  EXPECT_EQ(scan.stack_id(2), 7u);
  EXPECT_EQ(scan.highest(), 0x7f0000000000 + huge);
  EXPECT_EQ(scan.find(0x7f0000000000 + huge - 1), 2);
  EXPECT_TRUE(scan.filter().may_hold(0x7f0000000000 + huge - 1));
  EXPECT_TRUE(scan.filter().may_hold(0x7f0000000000 + (huge >> 1)));
}

TEST(ScanBlocksTest, StatesChangeWithoutTouchingTheRest) {
  ScanBlocks scan;
  ASSERT_TRUE(scan.try_add(0x2000, 24, 5, true));
  ASSERT_TRUE(scan.try_add(0x1000, 16, 4, false));
  ASSERT_TRUE(scan.try_sort());
  scan.set_state(1, BlockState::kPossible);
  scan.set_state(1, BlockState::kReachable);
  scan.set_state(0, BlockState::kIndirect);
  EXPECT_EQ(scan.state(0), BlockState::kIndirect);
  EXPECT_EQ(scan.state(1), BlockState::kReachable);
  EXPECT_EQ(scan.start(1), 0x2000u);
  EXPECT_TRUE(scan.ignored(1));
  EXPECT_FALSE(scan.ignored(0));
  EXPECT_EQ(scan.size_of(1), 24u);
  EXPECT_EQ(scan.stack_id(1), 5u);
}

}  // namespace
}  // namespace memtrack::rt

namespace memtrack::rt {
namespace {

// A pool's superblock and the blocks of the program's allocator inside it (one at its very
// start), a malloc-like block inside a plain one, and unrelated blocks: the sort with
// drop_containers leaves out exactly the two blocks that hold others, and the lookups find
// the inner ones.
TEST(ScanBlocksContainers, TheBlocksThatHoldOthersAreLeftOut) {
  ScanBlocks blocks;
  const uintptr_t super = 0x100000;
  ASSERT_TRUE(blocks.try_add(0x80000, 64, 1, false));        // unrelated, before
  ASSERT_TRUE(blocks.try_add(super + 64, 32, 3, false));     // pool blocks, out of order
  ASSERT_TRUE(blocks.try_add(super, 4096, 2, false));        // the superblock
  ASSERT_TRUE(blocks.try_add(super, 48, 4, false));          // at the superblock's start
  ASSERT_TRUE(blocks.try_add(super + 4096, 16, 5, false));   // right after it: not inside
  ASSERT_TRUE(blocks.try_add(0x200000, 256, 6, false));      // a plain block
  ASSERT_TRUE(blocks.try_add(0x200000 + 16, 24, 7, false));  // a malloc-like block in it
  ASSERT_TRUE(blocks.try_sort(true));
  EXPECT_EQ(blocks.dropped_containers(), 2u);
  std::vector<uint32_t> stacks;
  for (size_t i = 0; i < blocks.size(); ++i) stacks.push_back(blocks.stack_id(i));
  EXPECT_EQ(stacks, (std::vector<uint32_t>{1, 4, 3, 5, 7}));
  EXPECT_EQ(blocks.find(super + 8), 1);
  EXPECT_EQ(blocks.find(super + 70), 2);
  EXPECT_EQ(blocks.find(super + 1000), -1);  // the superblock's free part: no block
  EXPECT_EQ(blocks.find(0x200000), -1);
  EXPECT_EQ(blocks.find(0x200000 + 20), 4);
  EXPECT_EQ(blocks.lowest(), uintptr_t{0x80000});
  EXPECT_EQ(blocks.highest(), uintptr_t{0x200000 + 40});
  for (size_t i = 0; i < blocks.size(); ++i) EXPECT_EQ(blocks.state(i), BlockState::kUnreached);
}

TEST(ScanBlocksContainers, WithoutTheOptionNothingIsLeftOut) {
  ScanBlocks blocks;
  ASSERT_TRUE(blocks.try_add(0x100000, 4096, 1, false));
  ASSERT_TRUE(blocks.try_add(0x100000 + 64, 32, 2, false));
  ASSERT_TRUE(blocks.try_sort());
  EXPECT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks.dropped_containers(), 0u);
}

}  // namespace
}  // namespace memtrack::rt
