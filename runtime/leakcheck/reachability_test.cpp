// Unit tests of memcheck's classification rules on blocks in ordinary memory.
#include "runtime/leakcheck/reachability.h"

#include <gtest/gtest.h>

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

  // Builds the sorted block array (added in reverse, so the sort has work), scans `roots` as
  // a root range, classifies (leaders in the order of `sequence`, if given).
  void classify(const std::vector<uintptr_t>& roots,
                uint64_t (*sequence)(uintptr_t start) = nullptr) {
    for (size_t i = owned_.size(); i-- > 0;) {
      ASSERT_TRUE(blocks_.try_add(reinterpret_cast<uintptr_t>(owned_[i]), sizes_[i],
                                  static_cast<uint32_t>(i), false));
    }
    ASSERT_TRUE(blocks_.try_sort());
    ASSERT_TRUE(scan_.try_init(blocks_, readonly_));
    if (!roots.empty()) {
      auto begin = reinterpret_cast<uintptr_t>(roots.data());
      scan_.scan_root_range(begin, begin + roots.size() * 8);
    }
    ASSERT_TRUE(scan_.propagate());
    ASSERT_TRUE(scan_.classify_unreached(sequence));
  }

  // As classify, then the C runtime's roots (begin_runtime_roots) with `runtime_roots` as its
  // only range; a block counts as the runtime's when its number (its stack id) has its bit
  // set in `runtime_blocks`. `excluded`, if set, is left out of the program's roots.
  void classify_with_runtime(const std::vector<uintptr_t>& roots,
                             const std::vector<uintptr_t>& runtime_roots, uint64_t runtime_blocks,
                             const core::sys::MemoryRange* excluded = nullptr) {
    for (size_t i = owned_.size(); i-- > 0;) {
      ASSERT_TRUE(blocks_.try_add(reinterpret_cast<uintptr_t>(owned_[i]), sizes_[i],
                                  static_cast<uint32_t>(i), false));
    }
    ASSERT_TRUE(blocks_.try_sort());
    ASSERT_TRUE(scan_.try_init(blocks_, readonly_));
    if (excluded != nullptr) scan_.set_excluded(excluded, 1);
    if (!roots.empty()) {
      auto begin = reinterpret_cast<uintptr_t>(roots.data());
      scan_.scan_root_range(begin, begin + roots.size() * 8);
    }
    ASSERT_TRUE(scan_.propagate());
    g_runtime_blocks = runtime_blocks;
    scan_.begin_runtime_roots(
        [](uint32_t stack_id) { return (g_runtime_blocks >> stack_id & 1) != 0; });
    auto begin = reinterpret_cast<uintptr_t>(runtime_roots.data());
    scan_.scan_root_range(begin, begin + runtime_roots.size() * 8);
    ASSERT_TRUE(scan_.propagate());
    ASSERT_TRUE(scan_.classify_unreached());
  }
  static inline uint64_t g_runtime_blocks = 0;

  size_t index_of(const void* p) {
    for (size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_.start(i) == reinterpret_cast<uintptr_t>(p)) return i;
    }
    ADD_FAILURE() << "no block";
    return 0;
  }
  BlockState state_of(const void* p) { return blocks_.state(index_of(p)); }

  // The indirect totals of the clique `p` leads (zero if none).
  ReachabilityScan::Clique clique_of(const void* p) {
    size_t index = index_of(p);
    for (const ReachabilityScan::Clique& c : scan_.cliques()) {
      if (c.leader == index) return c;
    }
    return ReachabilityScan::Clique{static_cast<uint32_t>(index), 0, 0};
  }

  std::vector<uintptr_t*> owned_;
  std::vector<size_t> sizes_;
  ScanBlocks blocks_;
  ReachabilityScan scan_;
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
  EXPECT_EQ(state_of(a), BlockState::kReachable);
  EXPECT_EQ(state_of(b), BlockState::kReachable);
}

// glibc's environment tree: a root in libc's data points at the tree's root node, which
// points at its children through pointers whose low bit holds a colour.
TEST_F(ReachabilityTest, RuntimeRootsHoldTheRuntimesBlocksThroughAnyPointer) {
  uintptr_t* root = make(2);
  uintptr_t* left = make(2);
  uintptr_t* right = make(2);
  root[0] = addr(left) | 1;
  root[1] = addr(right);
  classify_with_runtime({}, {addr(root)}, 0b111);
  for (const void* p : {root, left, right}) {
    EXPECT_EQ(state_of(p), BlockState::kReachable);
    EXPECT_TRUE(scan_.runtime_held(index_of(p)));
  }
}

// A putenv string or a setvbuf buffer: the program's block, kept by glibc only.
TEST_F(ReachabilityTest, TheProgramsBlocksKeptByTheRuntimeFollowTheUsualRules) {
  uintptr_t* environ_array = make(2);
  uintptr_t* string = make(2);
  uintptr_t* tokenized = make(4);
  environ_array[0] = addr(string);
  tokenized[0] = 12345;
  // strtok's saved position: an interior pointer in libc's data
  classify_with_runtime({}, {addr(environ_array), addr(tokenized) + 16}, 0b001);
  EXPECT_TRUE(scan_.runtime_held(index_of(environ_array)));
  EXPECT_EQ(state_of(string), BlockState::kReachable);
  EXPECT_FALSE(scan_.runtime_held(index_of(string)));
  EXPECT_EQ(state_of(tokenized), BlockState::kPossible);
  EXPECT_FALSE(scan_.runtime_held(index_of(tokenized)));
}

TEST_F(ReachabilityTest, ABlockTheProgramReachesIsNeverTheRuntimes) {
  uintptr_t* shared = make(2);
  uintptr_t* lost = make(2);
  classify_with_runtime({addr(shared)}, {addr(shared)}, 0b11);
  EXPECT_EQ(state_of(shared), BlockState::kReachable);
  EXPECT_FALSE(scan_.runtime_held(index_of(shared)));
  EXPECT_EQ(state_of(lost), BlockState::kUnreached);  // no root at all: lost, whoever made it
  EXPECT_FALSE(scan_.runtime_held(index_of(lost)));
}

TEST_F(ReachabilityTest, ExcludedRangesAreLeftOutOfTheProgramsRoots) {
  uintptr_t* kept = make(2);
  uintptr_t* runtimes = make(2);
  std::vector<uintptr_t> roots = {addr(kept), addr(runtimes), addr(kept)};
  auto second = reinterpret_cast<uintptr_t>(&roots[1]);
  core::sys::MemoryRange excluded{second, second + 8};
  classify_with_runtime(roots, {addr(runtimes)}, 0b10, &excluded);
  EXPECT_FALSE(scan_.runtime_held(index_of(kept)));
  EXPECT_TRUE(scan_.runtime_held(index_of(runtimes)));
}

TEST_F(ReachabilityTest, InteriorPointerMakesPossibleAndWhatItHoldsToo) {
  uintptr_t* a = make(4);
  uintptr_t* b = make(2);
  a[0] = 12345;  // not a length or array count: no heuristic applies
  a[3] = addr(b);
  classify({addr(a) + 16});
  EXPECT_EQ(state_of(a), BlockState::kPossible);
  EXPECT_EQ(state_of(b), BlockState::kPossible);
}

TEST_F(ReachabilityTest, ChainFromLostBlockIsDefinitePlusIndirect) {
  uintptr_t* a = make(2);
  uintptr_t* b = make(3);
  uintptr_t* c = make(1);
  a[0] = addr(b);
  b[1] = addr(c);
  classify({});
  EXPECT_EQ(state_of(a), BlockState::kUnreached);  // definitely lost leader
  EXPECT_EQ(state_of(b), BlockState::kIndirect);
  EXPECT_EQ(state_of(c), BlockState::kIndirect);
  EXPECT_EQ(clique_of(a).bytes, 32u);
  EXPECT_EQ(clique_of(a).blocks, 2u);
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
  for (size_t i = 0; i < blocks_.size(); ++i) {
    if (blocks_.state(i) == BlockState::kUnreached) {
      ++definite;
      EXPECT_EQ(i, 0u);  // the lowest address leads
      indirect = clique_of(reinterpret_cast<const void*>(blocks_.start(i))).blocks;
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
  for (size_t i = 0; i < blocks_.size(); ++i) {
    if (blocks_.state(i) == BlockState::kUnreached) {
      ++definite;
      indirect_blocks += clique_of(reinterpret_cast<const void*>(blocks_.start(i))).blocks;
    }
  }
  EXPECT_EQ(definite, 1);
  EXPECT_EQ(indirect_blocks, 2u);
  EXPECT_EQ(state_of(c), BlockState::kUnreached);
  EXPECT_EQ(clique_of(c).blocks, 2u);  // a's clique, handed over whole
  EXPECT_EQ(clique_of(c).bytes, 16u);
  EXPECT_EQ(clique_of(a).blocks, 0u);
}

TEST_F(ReachabilityTest, LeaderTakesOverCliquesAndLoneLeadersBelowIt) {
  uintptr_t* a = make(2);  // leads {b}
  uintptr_t* b = make(3);
  uintptr_t* c = make(1);  // alone: leads nothing
  uintptr_t* d = make(4);  // points at a (interior) and c: takes both over
  a[1] = addr(b);
  d[0] = addr(a) + 8;
  d[3] = addr(c);
  classify({});
  EXPECT_EQ(state_of(a), BlockState::kIndirect);
  EXPECT_EQ(state_of(b), BlockState::kIndirect);
  EXPECT_EQ(state_of(c), BlockState::kIndirect);
  EXPECT_EQ(state_of(d), BlockState::kUnreached);
  EXPECT_EQ(clique_of(d).blocks, 3u);
  EXPECT_EQ(clique_of(d).bytes, 16u + 24u + 8u);
  EXPECT_EQ(clique_of(a).blocks, 0u);
  EXPECT_EQ(clique_of(a).bytes, 0u);
}

TEST_F(ReachabilityTest, IgnoredBlockIsARoot) {
  uintptr_t* a = make(1);
  uintptr_t* b = make(1);
  a[0] = addr(b);
  for (size_t i = owned_.size(); i-- > 0;) {
    ASSERT_TRUE(blocks_.try_add(addr(owned_[i]), sizes_[i], 0, owned_[i] == a));
  }
  ASSERT_TRUE(blocks_.try_sort());
  ASSERT_TRUE(scan_.try_init(blocks_, readonly_));
  scan_.mark_ignored();
  ASSERT_TRUE(scan_.propagate());
  ASSERT_TRUE(scan_.classify_unreached());
  EXPECT_EQ(state_of(a), BlockState::kReachable);
  EXPECT_EQ(state_of(b), BlockState::kReachable);
}

TEST_F(ReachabilityTest, Length64AndNewArrayHeuristicsCountAsStart) {
  uintptr_t* len = make(4);
  len[0] = 24;  // length of the rest
  uintptr_t* arr = make(5);
  arr[0] = 4;  // four 8-byte elements follow
  classify({addr(len) + 8, addr(arr) + 8});
  EXPECT_EQ(state_of(len), BlockState::kReachable);
  EXPECT_EQ(state_of(arr), BlockState::kReachable);
}

TEST_F(ReachabilityTest, OnePastTheEndPointsAtNothing) {
  uintptr_t* a = make(2);
  classify({addr(a) + 16});
  EXPECT_EQ(state_of(a), BlockState::kUnreached);
}

// Allocation order for the next test: the blocks of g_sequence_order, first to last.
std::vector<uintptr_t> g_sequence_order;
uint64_t sequence_in_test_order(uintptr_t start) {
  for (size_t i = 0; i < g_sequence_order.size(); ++i) {
    if (g_sequence_order[i] == start) return i + 1;
  }
  return 0;
}

// memcheck takes leaders in address order, which in its allocator is allocation order; with
// the blocks' allocation sequence, the block of a lost cycle allocated first leads wherever
// its address is, and one it reaches that led earlier hands its clique over.
TEST_F(ReachabilityTest, LeadersGoInAllocationOrderWhenBlocksKeepOne) {
  uintptr_t* low = make(2);
  uintptr_t* middle = make(2);
  uintptr_t* high = make(2);
  low[0] = addr(high);  // low <-> high: a cycle
  high[0] = addr(low);
  middle[0] = addr(low);  // middle -> low (middle unreached too)
  g_sequence_order = {addr(high), addr(low), addr(middle)};
  classify({}, sequence_in_test_order);
  EXPECT_EQ(state_of(high), BlockState::kUnreached);  // allocated first: definitely lost
  EXPECT_EQ(state_of(low), BlockState::kIndirect);
  EXPECT_EQ(state_of(middle), BlockState::kUnreached);  // nothing reaches it
  EXPECT_EQ(clique_of(high).blocks, 1u);
  EXPECT_EQ(clique_of(middle).blocks, 0u);  // low was claimed before middle led
}

TEST_F(ReachabilityTest, ALaterLeaderTakesOverTheCliqueOfAnEarlierOneItReaches) {
  uintptr_t* a = make(2);
  uintptr_t* b = make(2);
  uintptr_t* c = make(2);
  a[0] = addr(b);  // c -> a -> b, allocated b, a, c
  c[0] = addr(a);
  g_sequence_order = {addr(b), addr(a), addr(c)};
  classify({}, sequence_in_test_order);
  // b leads (nothing of its own), then a leads and claims b (which led before: handed over),
  // then c claims a and takes a's clique: c is the only definitely lost block.
  EXPECT_EQ(state_of(c), BlockState::kUnreached);
  EXPECT_EQ(state_of(a), BlockState::kIndirect);
  EXPECT_EQ(state_of(b), BlockState::kIndirect);
  EXPECT_EQ(clique_of(c).blocks, 2u);
  EXPECT_EQ(clique_of(c).bytes, 32u);
  EXPECT_EQ(clique_of(a).blocks, 0u);
}

TEST_F(ReachabilityTest, WithoutSequencesLeadersGoInAddressOrder) {
  uintptr_t* low = make(2);
  uintptr_t* high = make(2);
  low[0] = addr(high);
  high[0] = addr(low);
  g_sequence_order = {};  // every block 0: address order
  classify({}, sequence_in_test_order);
  EXPECT_EQ(state_of(low), BlockState::kUnreached);
  EXPECT_EQ(state_of(high), BlockState::kIndirect);
}

}  // namespace
}  // namespace memtrack::rt
