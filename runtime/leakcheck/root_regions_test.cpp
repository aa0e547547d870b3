// The table of __lsan_register_root_region regions: registered, unregistered by exact
// pointer and size, copied as [begin, end) pairs, and full at kMaxRootRegions.
#include "runtime/leakcheck/root_regions.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace memtrack::rt {
namespace {

uintptr_t g_out[kMaxRootRegions + 1][2];

size_t count() {
  return copy_root_regions(g_out, kMaxRootRegions + 1);
}

TEST(RootRegions, RegisterCopyUnregister) {
  ASSERT_EQ(count(), 0u);
  ASSERT_TRUE(register_root_region(0x1000, 0x100));
  ASSERT_TRUE(register_root_region(0x5000, 0x20));
  ASSERT_EQ(count(), 2u);
  EXPECT_EQ(g_out[0][0], 0x1000u);
  EXPECT_EQ(g_out[0][1], 0x1100u);
  EXPECT_EQ(g_out[1][0], 0x5000u);
  EXPECT_EQ(g_out[1][1], 0x5020u);
  EXPECT_FALSE(unregister_root_region(0x1000, 0x80));  // LSan: the same size is required
  EXPECT_TRUE(unregister_root_region(0x1000, 0x100));
  EXPECT_FALSE(unregister_root_region(0x1000, 0x100));
  ASSERT_EQ(count(), 1u);
  EXPECT_EQ(g_out[0][0], 0x5000u);
  EXPECT_TRUE(unregister_root_region(0x5000, 0x20));
  EXPECT_EQ(count(), 0u);
}

TEST(RootRegions, SameRegionTwiceIsRemovedOnceEachAndASizeThatWrapsEndsAtTheTop) {
  ASSERT_TRUE(register_root_region(0x1000, 0x10));
  ASSERT_TRUE(register_root_region(0x1000, 0x10));
  EXPECT_TRUE(unregister_root_region(0x1000, 0x10));
  EXPECT_EQ(count(), 1u);
  EXPECT_TRUE(unregister_root_region(0x1000, 0x10));
  ASSERT_TRUE(register_root_region(UINTPTR_MAX - 4, 100));
  ASSERT_EQ(count(), 1u);
  EXPECT_EQ(g_out[0][1], UINTPTR_MAX);
  EXPECT_TRUE(unregister_root_region(UINTPTR_MAX - 4, 100));
}

TEST(RootRegions, FullTableRefusesMore) {
  for (size_t i = 0; i < kMaxRootRegions; ++i)
    ASSERT_TRUE(register_root_region(0x1000 * (i + 1), 8));
  EXPECT_FALSE(register_root_region(0x10, 8));
  EXPECT_EQ(count(), kMaxRootRegions);
  for (size_t i = 0; i < kMaxRootRegions; ++i)
    ASSERT_TRUE(unregister_root_region(0x1000 * (i + 1), 8));
  EXPECT_EQ(count(), 0u);
}

}  // namespace
}  // namespace memtrack::rt
