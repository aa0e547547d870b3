// Unit tests for the metadata memory cap.
#include "core/metadata_budget.h"

#include <gtest/gtest.h>

#include "core/alloc_table.h"

namespace memtrack::core {
namespace {

class MetadataBudgetTest : public ::testing::Test {
 protected:
  void TearDown() override { set_metadata_limit(0); }
};

TEST_F(MetadataBudgetTest, RefusesMappingsBeyondTheLimitAndRecoversAfterUnmap) {
  size_t base = metadata_bytes();
  set_metadata_limit(base + 3 * 4096);
  void* a = map_metadata(2 * 4096);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(metadata_bytes(), base + 2 * 4096);
  EXPECT_EQ(map_metadata(2 * 4096), nullptr);  // would exceed the cap
  EXPECT_EQ(metadata_bytes(), base + 2 * 4096);
  void* b = map_metadata(4096);  // exactly reaches the cap
  ASSERT_NE(b, nullptr);
  unmap_metadata(a, 2 * 4096);
  void* c = map_metadata(2 * 4096);
  EXPECT_NE(c, nullptr);
  unmap_metadata(b, 4096);
  unmap_metadata(c, 2 * 4096);
  EXPECT_EQ(metadata_bytes(), base);
}

TEST_F(MetadataBudgetTest, NoLimitMeansUnlimited) {
  set_metadata_limit(0);
  void* big = map_metadata(size_t{64} << 20);
  ASSERT_NE(big, nullptr);
  unmap_metadata(big, size_t{64} << 20);
}

TEST_F(MetadataBudgetTest, FullTableRejectsInsertsButKeepsWhatItHas) {
  auto table = std::make_unique<AllocTable>();
  set_metadata_limit(metadata_bytes() + 12 * 1024);  // one shard's first 512 slots
  AllocRecord rec;
  rec.ptr = 0x1000;
  ASSERT_TRUE(table->try_insert(rec));
  size_t inserted = 1;
  // Keep inserting until a shard needs memory it may not have.
  for (uintptr_t p = 0x2000; inserted < 100000; p += 0x1000) {
    rec.ptr = p;
    if (!table->try_insert(rec)) break;
    ++inserted;
  }
  EXPECT_LT(inserted, 100000u);
  EXPECT_EQ(table->size(), inserted);
  AllocRecord out;
  EXPECT_TRUE(table->try_lookup(0x1000, &out));
  table->test_only_reset();
}

}  // namespace
}  // namespace memtrack::core
