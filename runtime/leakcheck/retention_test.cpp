// Unit tests of the retention graph: dominators and retained sizes on blocks in ordinary
// memory, checked by hand on small graphs and against a brute-force oracle on random ones.
#include "runtime/leakcheck/retention.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace memtrack::rt {
namespace {

uintptr_t addr(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

// Blocks carved out of one zeroed arena (as in reachability_test.cpp); each block's stack id is
// its site, given at make().
class RetentionTest : public ::testing::Test {
 protected:
  uintptr_t* make(size_t words, uint32_t site = 0) {
    uintptr_t* p = arena_.data() + used_ + 2;
    used_ += 2 + (words == 0 ? 1 : words);
    owned_.push_back(p);
    sizes_.push_back(words * 8);
    sites_.push_back(site == 0 ? static_cast<uint32_t>(owned_.size()) : site);
    return p;
  }

  // Each root set is scanned as a root range of its own source (kRegion, so no naming).
  void build(const std::vector<std::vector<uintptr_t>*>& roots) {
    for (size_t i = owned_.size(); i-- > 0;) {
      ASSERT_TRUE(blocks_.try_add(addr(owned_[i]), sizes_[i], sites_[i], false));
    }
    ASSERT_TRUE(blocks_.try_sort());
    ASSERT_TRUE(scan_.try_init(blocks_, readonly_));
    ASSERT_TRUE(scan_.keep_root_edges());
    for (size_t s = 0; s < roots.size(); ++s) {
      RootSource source;
      source.kind = RootKind::kRegion;
      source.start = addr(roots[s]->data());
      source.end = source.start + roots[s]->size() * 8;
      sources_.push_back(source);
      scan_.set_root_source(static_cast<uint32_t>(s));
      scan_.scan_root_range(source.start, source.end);
    }
    ASSERT_TRUE(scan_.propagate());
    ASSERT_TRUE(scan_.classify_unreached());
    ASSERT_TRUE(graph_.try_build(blocks_, scan_, sources_.data(), sources_.size(), nullptr));
  }

  size_t index_of(const void* p) const {
    for (size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_.start(i) == addr(p)) return i;
    }
    ADD_FAILURE() << "no block";
    return 0;
  }
  const void* dominator_of(const void* p) const {
    long d = graph_.dominator_block(index_of(p));
    return d < 0 ? nullptr : reinterpret_cast<const void*>(blocks_.start(static_cast<size_t>(d)));
  }
  uint64_t retained_blocks(const void* p) const { return graph_.retained_blocks(index_of(p)); }
  uint64_t retained_bytes(const void* p) const { return graph_.retained_bytes(index_of(p)); }

  std::vector<uintptr_t> arena_ = std::vector<uintptr_t>(1 << 16, 0);
  size_t used_ = 0;
  std::vector<uintptr_t*> owned_;
  std::vector<size_t> sizes_;
  std::vector<uint32_t> sites_;
  std::vector<RootSource> sources_;
  ScanBlocks blocks_;
  ReachabilityScan scan_;
  core::MmapArray<core::sys::MemoryRange> readonly_;
  RetentionGraph graph_;
};

TEST_F(RetentionTest, AChainIsDominatedLinkByLink) {
  uintptr_t* a = make(2);
  uintptr_t* b = make(2);
  uintptr_t* c = make(4);
  a[0] = addr(b);
  b[1] = addr(c);
  std::vector<uintptr_t> root = {addr(a)};
  build({&root});
  EXPECT_EQ(graph_.dominating_retainer(index_of(a)), 0u);
  EXPECT_EQ(dominator_of(b), a);
  EXPECT_EQ(dominator_of(c), b);
  EXPECT_EQ(retained_blocks(a), 3u);
  EXPECT_EQ(retained_bytes(a), 16u + 16u + 32u);
  EXPECT_EQ(retained_bytes(c), 32u);
  ASSERT_EQ(graph_.retainers().size(), 1u);
  EXPECT_EQ(graph_.retainers()[0].retained_bytes, 64u);
  EXPECT_EQ(graph_.retainers()[0].retained_blocks, 3u);
  EXPECT_EQ(graph_.retainers()[0].kind, RootKind::kRegion);
  EXPECT_TRUE(graph_.complete());
}

// The groups form the dominator tree by site: two tables of one site under one root, each
// with nodes of one site, give the nodes two groups, each under its own table's group.
TEST_F(RetentionTest, GroupsLieUnderTheGroupOfTheirHolders) {
  constexpr uint32_t kTable = 100, kNode = 200;
  uintptr_t* holder = make(2, 300);
  uintptr_t* table1 = make(2, kTable);
  uintptr_t* table2 = make(2, kTable);
  uintptr_t* node1 = make(3, kNode);
  uintptr_t* node1b = make(3, kNode);
  uintptr_t* node2 = make(3, kNode);
  holder[0] = addr(table1);
  table1[0] = addr(node1);
  node1[0] = addr(node1b);  // a node below a node of its own site: the same group
  table2[0] = addr(node2);
  std::vector<uintptr_t> root = {addr(holder), addr(table2)};
  build({&root});
  const auto& groups = graph_.groups();
  const uint32_t g1 = graph_.group_of(index_of(node1));
  const uint32_t g2 = graph_.group_of(index_of(node2));
  ASSERT_NE(g1, kNoGroup);
  ASSERT_NE(g2, kNoGroup);
  EXPECT_NE(g1, g2);
  EXPECT_EQ(graph_.group_of(index_of(node1b)), g1);
  EXPECT_EQ(groups[g1].blocks, 2u);
  EXPECT_EQ(groups[g1].bytes, 48u);
  EXPECT_EQ(groups[g1].parent, graph_.group_of(index_of(table1)));
  EXPECT_EQ(groups[g2].parent, graph_.group_of(index_of(table2)));
  EXPECT_EQ(groups[groups[g1].parent].parent, graph_.group_of(index_of(holder)));
  EXPECT_EQ(groups[g1].holder_kind, HolderKind::kSite);
  EXPECT_EQ(groups[g1].holder, kTable);
  EXPECT_EQ(groups[g1].root, 0u);
  // table2 is held by the root directly: a top group, parent of nothing but node2's.
  const RetentionGroup& t2 = groups[graph_.group_of(index_of(table2))];
  EXPECT_EQ(t2.holder_kind, HolderKind::kRetainer);
  EXPECT_EQ(t2.parent, kNoGroup);
  EXPECT_EQ(t2.retained_bytes, 16u + 24u);
  // A parent comes before its children (the result file's readers rely on it).
  for (uint32_t g = 0; g < groups.size(); ++g) {
    if (groups[g].parent != kNoGroup) {
      EXPECT_LT(groups[g].parent, g);
    }
  }
}

// Two ways down from a to d: d belongs to a, not to b or c.
TEST_F(RetentionTest, ADiamondBelongsToItsTop) {
  uintptr_t* a = make(2);
  uintptr_t* b = make(1);
  uintptr_t* c = make(1);
  uintptr_t* d = make(1);
  a[0] = addr(b);
  a[1] = addr(c);
  b[0] = addr(d);
  c[0] = addr(d);
  std::vector<uintptr_t> root = {addr(a)};
  build({&root});
  EXPECT_EQ(dominator_of(d), a);
  EXPECT_EQ(retained_blocks(b), 1u);
  EXPECT_EQ(retained_blocks(a), 4u);
}

// A block reachable from two roots: its retained size belongs to neither alone.
TEST_F(RetentionTest, ABlockHeldByTwoRootsBelongsToNeither) {
  uintptr_t* shared = make(2);
  uintptr_t* child = make(2);
  uintptr_t* own = make(2);
  shared[0] = addr(child);
  std::vector<uintptr_t> first = {addr(shared), addr(own)};
  std::vector<uintptr_t> second = {addr(shared)};
  build({&first, &second});
  EXPECT_EQ(graph_.dominating_retainer(index_of(shared)), kNoRetainer);
  EXPECT_EQ(dominator_of(shared), nullptr);
  EXPECT_EQ(dominator_of(child), shared);
  ASSERT_EQ(graph_.retainers().size(), 2u);
  EXPECT_EQ(graph_.retainers()[0].retained_blocks, 1u);  // `own` only
  EXPECT_EQ(graph_.retainers()[1].retained_blocks, 0u);
  EXPECT_EQ(graph_.shared_blocks(), 2u);
  EXPECT_EQ(graph_.shared_bytes(), 32u);
}

// A cycle hanging off one pointer: the entry dominates the rest.
TEST_F(RetentionTest, ACycleBelongsToItsEntry) {
  uintptr_t* a = make(1);
  uintptr_t* b = make(1);
  uintptr_t* c = make(1);
  a[0] = addr(b);
  b[0] = addr(c);
  c[0] = addr(a);
  std::vector<uintptr_t> root = {addr(b)};
  build({&root});
  EXPECT_EQ(dominator_of(c), b);
  EXPECT_EQ(dominator_of(a), c);
  EXPECT_EQ(retained_blocks(b), 3u);
}

// Groups by site: a table of 1 block at site 100 holding 3 nodes at site 200, one of which
// holds a node of the same site.
TEST_F(RetentionTest, GroupsNameTheSiteThatHoldsThem) {
  uintptr_t* table = make(3, 100);
  uintptr_t* n1 = make(2, 200);
  uintptr_t* n2 = make(2, 200);
  uintptr_t* n3 = make(2, 200);
  table[0] = addr(n1);
  table[1] = addr(n2);
  n2[0] = addr(n3);
  std::vector<uintptr_t> root = {addr(table)};
  build({&root});
  const RetentionGroup* nodes = nullptr;
  const RetentionGroup* tables = nullptr;
  for (const RetentionGroup& g : graph_.groups()) {
    if (g.stack_id == 200) nodes = &g;
    if (g.stack_id == 100) tables = &g;
  }
  ASSERT_NE(nodes, nullptr);
  ASSERT_NE(tables, nullptr);
  EXPECT_EQ(graph_.groups().size(), 2u);
  EXPECT_EQ(nodes->holder_kind, HolderKind::kSite);
  EXPECT_EQ(nodes->holder, 100u);
  EXPECT_EQ(nodes->root, 0u);
  EXPECT_EQ(nodes->blocks, 3u);
  EXPECT_EQ(nodes->bytes, 48u);
  EXPECT_EQ(nodes->retained_blocks, 3u);  // n1 and n2 are the tops; n2 holds n3
  EXPECT_EQ(tables->holder_kind, HolderKind::kRetainer);
  EXPECT_EQ(tables->holder, 0u);
  EXPECT_EQ(tables->retained_blocks, 4u);
  EXPECT_EQ(tables->retained_bytes, 24u + 48u);
}

// The dominator tree against its definition on random graphs: d dominates v when v cannot be
// reached from the roots without passing d, so d's retained blocks are the blocks that become
// unreachable when d is removed.
TEST_F(RetentionTest, RetainedSizesMatchTheDefinitionOnRandomGraphs) {
  std::mt19937 random(42);
  constexpr size_t kBlocks = 300;
  std::vector<uintptr_t*> nodes;
  for (size_t i = 0; i < kBlocks; ++i) nodes.push_back(make(3));
  std::vector<std::vector<size_t>> out(kBlocks);
  for (size_t i = 0; i < kBlocks; ++i) {
    for (size_t w = 0; w < 3; ++w) {
      if (random() % 4 == 0) continue;  // some words hold no pointer
      // Mostly forward edges to nearby blocks, some anywhere (back edges, cycles).
      size_t target = random() % 3 == 0 ? random() % kBlocks : (i + 1 + random() % 8) % kBlocks;
      nodes[i][w] = addr(nodes[target]);
      out[i].push_back(target);
    }
  }
  std::vector<uintptr_t> root_a = {addr(nodes[0]), addr(nodes[150])};
  std::vector<uintptr_t> root_b = {addr(nodes[7])};
  std::vector<std::vector<size_t>> roots = {{0, 150}, {7}};
  build({&root_a, &root_b});
  EXPECT_TRUE(graph_.complete());
  auto reached_without = [&](size_t removed) {
    std::vector<bool> seen(kBlocks, false);
    std::vector<size_t> work;
    for (const auto& r : roots) {
      for (size_t v : r) {
        if (v != removed && !seen[v]) {
          seen[v] = true;
          work.push_back(v);
        }
      }
    }
    while (!work.empty()) {
      size_t v = work.back();
      work.pop_back();
      for (size_t t : out[v]) {
        if (t != removed && !seen[t]) {
          seen[t] = true;
          work.push_back(t);
        }
      }
    }
    return seen;
  };
  std::vector<bool> reachable = reached_without(kBlocks);
  for (size_t d = 0; d < kBlocks; ++d) {
    if (!reachable[d]) continue;
    std::vector<bool> seen = reached_without(d);
    uint64_t lost = 0;
    for (size_t v = 0; v < kBlocks; ++v) lost += reachable[v] && !seen[v] ? 1 : 0;
    EXPECT_EQ(retained_blocks(nodes[d]), lost) << "block " << d;
  }
  EXPECT_GE(graph_.passes(), 2u);
}

}  // namespace
}  // namespace memtrack::rt
