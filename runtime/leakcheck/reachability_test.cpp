// Unit tests of memcheck's classification rules on blocks in ordinary memory.
#include "runtime/leakcheck/reachability.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace memtrack::rt {
namespace {

// Blocks are carved out of one zeroed arena, 16 bytes apart, so the scan reads real words
// and the word before each block (where glibc keeps a chunk size) is readable and zero.
class ReachabilityTest : public ::testing::Test {
 protected:
  uintptr_t* make(size_t words) {
    uintptr_t* p = arena_.data() + used_ + 2;
    used_ += 2 + (words == 0 ? 1 : words);
    owned_.push_back(p);
    sizes_.push_back(words * 8);
    return p;
  }

  std::vector<uintptr_t> arena_ = std::vector<uintptr_t>(4096, 0);
  size_t used_ = 0;

  // Builds the sorted block array, scans `roots` as a root range, classifies.
  void classify(const std::vector<uintptr_t>& roots) {
    std::vector<size_t> order(owned_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return owned_[a] < owned_[b]; });
    for (size_t i : order) {
      ScanBlock b{};
      b.start = reinterpret_cast<uintptr_t>(owned_[i]);
      b.size = sizes_[i];
      b.stack_id = static_cast<uint32_t>(i);
      ASSERT_TRUE(blocks_.try_push_back(b));
    }
    ReachabilityScan scan;
    ASSERT_TRUE(scan.try_init(blocks_, readonly_));
    if (!roots.empty()) {
      auto begin = reinterpret_cast<uintptr_t>(roots.data());
      scan.scan_root_range(begin, begin + roots.size() * 8);
    }
    ASSERT_TRUE(scan.propagate());
    scan.classify_unreached();
  }

  const ScanBlock& block_of(const void* p) {
    for (const ScanBlock& b : blocks_) {
      if (b.start == reinterpret_cast<uintptr_t>(p)) return b;
    }
    ADD_FAILURE() << "no block";
    return blocks_[0];
  }

  std::vector<uintptr_t*> owned_;
  std::vector<size_t> sizes_;
  core::MmapArray<ScanBlock> blocks_;
  core::MmapArray<core::sys::MemoryRange> readonly_;
};

uintptr_t addr(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

TEST_F(ReachabilityTest, StartPointerFromRootIsReachableAndPropagates) {
  uintptr_t* a = make(2);
  uintptr_t* b = make(2);
  a[1] = addr(b);
  classify({addr(a)});
  EXPECT_EQ(block_of(a).state, BlockState::kReachable);
  EXPECT_EQ(block_of(b).state, BlockState::kReachable);
}

TEST_F(ReachabilityTest, InteriorPointerMakesPossibleAndWhatItHoldsToo) {
  uintptr_t* a = make(4);
  uintptr_t* b = make(2);
  a[0] = 12345;  // not a length or array count: no heuristic applies
  a[3] = addr(b);
  classify({addr(a) + 16});
  EXPECT_EQ(block_of(a).state, BlockState::kPossible);
  EXPECT_EQ(block_of(b).state, BlockState::kPossible);
}

TEST_F(ReachabilityTest, ChainFromLostBlockIsDefinitePlusIndirect) {
  uintptr_t* a = make(2);
  uintptr_t* b = make(3);
  uintptr_t* c = make(1);
  a[0] = addr(b);
  b[1] = addr(c);
  classify({});
  EXPECT_EQ(block_of(a).state, BlockState::kUnreached);  // definitely lost leader
  EXPECT_EQ(block_of(b).state, BlockState::kIndirect);
  EXPECT_EQ(block_of(c).state, BlockState::kIndirect);
  EXPECT_EQ(block_of(a).indirect_bytes, 32u);
  EXPECT_EQ(block_of(a).indirect_blocks, 2u);
}

TEST_F(ReachabilityTest, CycleHasOneDefiniteLowestAddressLeader) {
  uintptr_t* x = make(1);
  uintptr_t* y = make(1);
  uintptr_t* z = make(1);
  x[0] = addr(y);
  y[0] = addr(z);
  z[0] = addr(x);
  classify({});
  int definite = 0;
  uint64_t indirect = 0;
  for (const ScanBlock& b : blocks_) {
    if (b.state == BlockState::kUnreached) {
      ++definite;
      EXPECT_EQ(b.start, blocks_[0].start);  // the lowest address leads
      indirect = b.indirect_blocks;
    }
  }
  EXPECT_EQ(definite, 1);
  EXPECT_EQ(indirect, 2u);
}

TEST_F(ReachabilityTest, LaterLeaderAbsorbsEarlierClique) {
  // Whatever the addresses, totals per kind must be 1 definite + 2 indirect.
  uintptr_t* a = make(1);
  uintptr_t* b = make(1);
  uintptr_t* c = make(1);
  a[0] = addr(b);
  c[0] = addr(a);
  classify({});
  int definite = 0;
  uint64_t indirect_blocks = 0;
  for (const ScanBlock& blk : blocks_) {
    if (blk.state == BlockState::kUnreached) {
      ++definite;
      indirect_blocks += blk.indirect_blocks;
    }
  }
  EXPECT_EQ(definite, 1);
  EXPECT_EQ(indirect_blocks, 2u);
  EXPECT_EQ(block_of(c).state, BlockState::kUnreached);
}

TEST_F(ReachabilityTest, Length64AndNewArrayHeuristicsCountAsStart) {
  uintptr_t* len = make(4);
  len[0] = 24;  // length of the rest
  uintptr_t* arr = make(5);
  arr[0] = 4;  // four 8-byte elements follow
  classify({addr(len) + 8, addr(arr) + 8});
  EXPECT_EQ(block_of(len).state, BlockState::kReachable);
  EXPECT_EQ(block_of(arr).state, BlockState::kReachable);
}

TEST_F(ReachabilityTest, OnePastTheEndPointsAtNothing) {
  uintptr_t* a = make(2);
  classify({addr(a) + 16});
  EXPECT_EQ(block_of(a).state, BlockState::kUnreached);
}

}  // namespace
}  // namespace memtrack::rt
