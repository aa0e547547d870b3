// Unit tests of the exit report model: grouping by stack and ordering.
#include "runtime/leakcheck/leak_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

namespace memtrack::rt {
namespace {

class LeakReportTest : public ::testing::Test {
 protected:
  void TearDown() override { table_->table().test_only_reset(); }

  void add(uintptr_t ptr, uint64_t size, uint32_t stack_id) {
    core::AllocRecord rec;
    rec.ptr = ptr;
    rec.size = size;
    rec.stack_id = stack_id;
    ASSERT_TRUE(table_->try_insert(rec, heap_thread_));
  }

  // The heap is off: every record goes to the allocation table.
  std::unique_ptr<core::BlockRecords> table_ = std::make_unique<core::BlockRecords>();
  core::HeapThread heap_thread_{};
};

TEST(SampleWeightTest, ASampledBlockStandsForOneOverItsProbability) {
  SystemRuntimeCode runtime_code;
  runtime_code.ranges[0] = {0x7000, 0x8000};
  runtime_code.count = 1;
  runtime_code.lowest = 0x7000;
  runtime_code.highest = 0x8000;
  uintptr_t program_frame = 0x1234;
  uintptr_t runtime_frame = 0x7100;  // a return address: its call lies just before
  core::StackView program{&program_frame, 1};
  core::StackView runtime{&runtime_frame, 1};
  // p(s) = 1 - exp(-s / I): a block of the interval's size is sampled with p = 0.632.
  EXPECT_NEAR(sample_weight(1000, 1000, program, runtime_code), 1.0 / (1.0 - std::exp(-1.0)), 1e-9);
  EXPECT_NEAR(sample_weight(16, 524288, program, runtime_code), 524288.0 / 16.0, 1.0);
  EXPECT_NEAR(sample_weight(1 << 30, 524288, program, runtime_code), 1.0, 1e-9);
  // The C/C++ runtime's own allocations always get a stack: they stand for themselves.
  EXPECT_EQ(sample_weight(16, 524288, runtime, runtime_code), 1.0);
  uintptr_t edge = 0x8000;  // returns to the range's end: the call is in it
  EXPECT_EQ(sample_weight(16, 524288, core::StackView{&edge, 1}, runtime_code), 1.0);
  EXPECT_NEAR(sample_weight(16, 16, core::StackView{nullptr, 0}, runtime_code),
              1.0 / (1.0 - std::exp(-1.0)), 1e-9);
}

TEST_F(LeakReportTest, SampledGroupsEstimateWhatTheirBlocksStandFor) {
  auto stacks = std::make_unique<core::StackDepot>();  // large: not on the stack
  uintptr_t frame = 0x1234;
  uint32_t site = stacks->intern(&frame, 1);
  SystemRuntimeCode runtime_code;  // none
  for (uintptr_t i = 0; i < 3; ++i) add(0x1000 + i * 16, 1000, site);
  add(0x9000, 40, core::StackDepot::kInvalidId);  // not sampled: no estimate
  LeakReport report;
  report.set_sampling(1000, &runtime_code, stacks.get());
  ASSERT_TRUE(report.try_collect(*table_, site));
  report.sort();
  ASSERT_EQ(report.groups().size(), 2u);
  const LeakGroup& sampled = report.groups()[0];
  EXPECT_EQ(sampled.stack_id, site);
  EXPECT_EQ(sampled.bytes, 3000u);  // its own blocks, exactly
  EXPECT_EQ(sampled.blocks, 3u);
  double weight = 1.0 / (1.0 - std::exp(-1.0));
  EXPECT_EQ(sampled.estimated_bytes, 3 * static_cast<uint64_t>(weight * 1000 + 0.5));
  EXPECT_EQ(sampled.estimated_blocks, static_cast<uint64_t>(std::lround(3 * weight)));
  const LeakGroup& unsampled = report.groups()[1];
  EXPECT_EQ(unsampled.bytes, 40u);
  EXPECT_EQ(unsampled.estimated_bytes, 0u);
  EXPECT_EQ(unsampled.estimated_blocks, 0u);
}

TEST_F(LeakReportTest, EmptyTableGivesNoGroups) {
  LeakReport report;
  ASSERT_TRUE(report.try_collect(*table_, 5));
  EXPECT_EQ(report.groups().size(), 0u);
  EXPECT_EQ(report.totals(false).bytes, 0u);
}

TEST_F(LeakReportTest, GroupsByStackAndSortsByBytesThenBlocks) {
  for (uintptr_t i = 0; i < 10; ++i) add(0x1000 + i * 16, 100, 2);  // 1000 bytes, 10 blocks
  add(0x9000, 1234, 1);                                             // 1234 bytes, 1 block
  add(0xa000, 500, 3);
  add(0xa100, 500, 3);  // 1000 bytes in 2 blocks: ties with stack 2 on bytes
  add(0xb000, 7, 0);    // unknown stack id 0 still forms a group
  LeakReport report;
  ASSERT_TRUE(report.try_collect(*table_, 3));
  report.sort();
  auto& groups = report.groups();
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].stack_id, 1u);
  EXPECT_EQ(groups[0].bytes, 1234u);
  EXPECT_EQ(groups[0].blocks, 1u);
  EXPECT_EQ(groups[1].stack_id, 2u);  // same bytes as stack 3, more blocks
  EXPECT_EQ(groups[1].blocks, 10u);
  EXPECT_EQ(groups[2].stack_id, 3u);
  EXPECT_EQ(groups[2].bytes, 1000u);
  EXPECT_EQ(groups[3].stack_id, 0u);
  EXPECT_EQ(groups[3].bytes, 7u);
  LeakTotals totals = report.totals(false);
  EXPECT_EQ(totals.bytes, 3241u);
  EXPECT_EQ(totals.blocks, 14u);
  EXPECT_EQ(totals.groups, 4u);
}

TEST_F(LeakReportTest, IgnoresStacksNewerThanTheSnapshot) {
  add(0x1000, 10, 1);
  add(0x2000, 20, 9);  // interned after the report read the depot size
  LeakReport report;
  ASSERT_TRUE(report.try_collect(*table_, 1));
  ASSERT_EQ(report.groups().size(), 1u);
  EXPECT_EQ(report.groups()[0].bytes, 10u);
}

TEST_F(LeakReportTest, TotalsSeparateRuntimeInternalGroups) {
  add(0x1000, 10, 1);
  add(0x2000, 20, 2);
  LeakReport report;
  ASSERT_TRUE(report.try_collect(*table_, 2));
  report.groups()[1].runtime_internal = true;
  EXPECT_EQ(report.totals(false).bytes, 10u);
  EXPECT_EQ(report.totals(true).bytes, 20u);
  EXPECT_EQ(report.totals(true).groups, 1u);
}

TEST_F(LeakReportTest, ClassifiedGroupsByStackAndKindWithCliqueTotals) {
  ScanBlocks blocks;
  ASSERT_TRUE(blocks.try_add(0x1000, 100, 1, false));  // definite, leads a clique
  ASSERT_TRUE(blocks.try_add(0x2000, 30, 2, false));   // indirect
  ASSERT_TRUE(blocks.try_add(0x3000, 20, 2, false));   // indirect
  ASSERT_TRUE(blocks.try_add(0x4000, 7, 1, false));    // definite, led a clique taken over
  ASSERT_TRUE(blocks.try_add(0x5000, 50, 1, false));   // reachable
  ASSERT_TRUE(blocks.try_add(0x6000, 60, 3, false));   // possible
  ASSERT_TRUE(blocks.try_add(0x7000, 70, 9, false));   // a stack newer than the snapshot
  ASSERT_TRUE(blocks.try_sort());
  blocks.set_state(1, BlockState::kIndirect);
  blocks.set_state(2, BlockState::kIndirect);
  blocks.set_state(4, BlockState::kReachable);
  blocks.set_state(5, BlockState::kPossible);
  core::MmapArray<ReachabilityScan::Clique> cliques;
  ASSERT_TRUE(cliques.try_push_back({0, 2, 50}));
  ASSERT_TRUE(cliques.try_push_back({3, 0, 0}));
  LeakReport report;
  ASSERT_TRUE(report.try_collect_classified(blocks, cliques, 3));
  report.sort();
  auto& groups = report.groups();
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].stack_id, 1u);
  EXPECT_EQ(groups[0].kind, LeakKind::kDefinite);
  EXPECT_EQ(groups[0].bytes, 107u);
  EXPECT_EQ(groups[0].blocks, 2u);
  EXPECT_EQ(groups[0].indirect_bytes, 50u);
  EXPECT_EQ(groups[0].indirect_blocks, 2u);
  EXPECT_EQ(groups[1].stack_id, 3u);
  EXPECT_EQ(groups[1].kind, LeakKind::kPossible);
  EXPECT_EQ(groups[1].bytes, 60u);
  EXPECT_EQ(groups[2].stack_id, 2u);  // as many bytes as the next, in more blocks
  EXPECT_EQ(groups[2].kind, LeakKind::kIndirect);
  EXPECT_EQ(groups[2].bytes, 50u);
  EXPECT_EQ(groups[2].blocks, 2u);
  EXPECT_EQ(groups[3].stack_id, 1u);
  EXPECT_EQ(groups[3].kind, LeakKind::kReachable);
  EXPECT_EQ(groups[3].bytes, 50u);
  EXPECT_EQ(groups[3].blocks, 1u);
  EXPECT_EQ(groups[3].indirect_bytes, 0u);
  EXPECT_FALSE(groups[3].runtime_internal);
}

}  // namespace
}  // namespace memtrack::rt
