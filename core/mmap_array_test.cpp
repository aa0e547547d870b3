// Unit tests for MmapArray growth and heap_sort.
// Test-only code: may allocate (std::vector and std::sort are the reference).
#include "core/mmap_array.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace memtrack::core {
namespace {

struct Pair {
  uint64_t key;
  uint32_t value;
};

TEST(MmapArrayTest, StartsEmpty) {
  MmapArray<int> array;
  EXPECT_EQ(array.size(), 0u);
  EXPECT_EQ(array.data(), nullptr);
  EXPECT_EQ(array.begin(), array.end());
}

TEST(MmapArrayTest, PushBackGrowsAndKeepsContent) {
  constexpr uint32_t kCount = 100000;  // many doublings past the first 256 slots
  MmapArray<Pair> array;
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_TRUE(array.try_push_back(Pair{uint64_t{i} * 3, i}));
  }
  ASSERT_EQ(array.size(), kCount);
  size_t mismatches = 0;
  for (uint32_t i = 0; i < kCount; ++i) {
    if (array[i].key != uint64_t{i} * 3 || array[i].value != i) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(array.end() - array.begin(), static_cast<ptrdiff_t>(kCount));
  EXPECT_EQ(array.begin(), array.data());
}

TEST(MmapArrayTest, ReserveKeepsContentAndAddress) {
  MmapArray<uint64_t> array;
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(array.try_push_back(i * i));
  ASSERT_TRUE(array.try_reserve(5000));
  EXPECT_EQ(array.size(), 10u);
  for (uint64_t i = 0; i < 10; ++i) EXPECT_EQ(array[i], i * i);

  // Within the reserved capacity nothing moves.
  uint64_t* data = array.data();
  for (uint64_t i = 10; i < 5000; ++i) ASSERT_TRUE(array.try_push_back(i * i));
  EXPECT_EQ(array.data(), data);
  EXPECT_TRUE(array.try_reserve(100));  // smaller than the capacity: no change
  EXPECT_EQ(array.data(), data);
  EXPECT_EQ(array.size(), 5000u);
  EXPECT_EQ(array[4999], 4999u * 4999u);
}

TEST(MmapArrayTest, ElementsAreWritable) {
  MmapArray<int> array;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(array.try_push_back(i));
  array[2] = 20;
  for (int& x : array) x += 1;
  const MmapArray<int>& view = array;
  EXPECT_EQ(view[0], 1);
  EXPECT_EQ(view[2], 21);
  EXPECT_EQ(view[4], 5);
}

std::vector<uint64_t> pseudo_random(size_t n, uint64_t seed) {
  std::vector<uint64_t> values(n);
  for (uint64_t& v : values) {  // xorshift64
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    v = seed % 5000;  // fewer values than elements, so there are many duplicates
  }
  return values;
}

TEST(HeapSortTest, SortsLikeStdSort) {
  std::vector<uint64_t> values = pseudo_random(10000, 0x9E3779B97F4A7C15ull);
  std::vector<uint64_t> expected = values;
  std::sort(expected.begin(), expected.end());
  heap_sort(values.data(), values.size(), [](uint64_t a, uint64_t b) { return a < b; });
  EXPECT_EQ(values, expected);
}

TEST(HeapSortTest, DescendingOrderByKey) {
  std::vector<uint64_t> keys = pseudo_random(10000, 42);
  MmapArray<Pair> array;
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(array.try_push_back(Pair{keys[i], static_cast<uint32_t>(i)}));
  }
  heap_sort(array.data(), array.size(), [](const Pair& a, const Pair& b) { return a.key > b.key; });
  std::sort(keys.begin(), keys.end(), [](uint64_t a, uint64_t b) { return a > b; });
  size_t mismatches = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (array[i].key != keys[i]) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
  // Every original element is still there exactly once.
  std::vector<uint32_t> seen;
  for (const Pair& p : array) seen.push_back(p.value);
  std::sort(seen.begin(), seen.end());
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], i);
}

TEST(HeapSortTest, SortedReversedAndEqualInputs) {
  auto less = [](int a, int b) { return a < b; };
  std::vector<int> sorted = {1, 2, 3, 4, 5, 6, 7};
  std::vector<int> reversed = {7, 6, 5, 4, 3, 2, 1};
  std::vector<int> equal = {3, 3, 3, 3};
  heap_sort(sorted.data(), sorted.size(), less);
  heap_sort(reversed.data(), reversed.size(), less);
  heap_sort(equal.data(), equal.size(), less);
  EXPECT_EQ(sorted, (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(reversed, (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(equal, (std::vector<int>{3, 3, 3, 3}));
}

TEST(HeapSortTest, ZeroOneAndTwoElements) {
  auto less = [](int a, int b) { return a < b; };
  heap_sort(static_cast<int*>(nullptr), 0, less);  // must not touch the pointer
  int one[] = {5};
  heap_sort(one, 1, less);
  EXPECT_EQ(one[0], 5);
  int two[] = {9, 2};
  heap_sort(two, 2, less);
  EXPECT_EQ(two[0], 2);
  EXPECT_EQ(two[1], 9);
}

}  // namespace
}  // namespace memtrack::core
