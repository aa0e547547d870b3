// Unit tests of the descriptor table: records, erases, ranges, capacity, threads.
// Test-only code.
#include "runtime/fd/fd_table.h"

#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

namespace memtrack::rt {
namespace {

using Call = core::result::ResourceCall;

FdInfo info(uint32_t stack_id, Call call = Call::kOpen, uint32_t flags = 0, const char* mode = "") {
  FdInfo i;
  i.stack_id = stack_id;
  i.call = call;
  i.flags = flags;
  for (size_t n = 0; n + 1 < sizeof(i.mode) && mode[n] != '\0'; ++n) i.mode[n] = mode[n];
  return i;
}

class FdTableTest : public ::testing::Test {
 protected:
  void TearDown() override { table_.test_only_reset(); }

  std::vector<std::pair<int, uint32_t>> contents() {
    std::vector<std::pair<int, uint32_t>> out;
    table_.for_each([&](int fd, const FdInfo& i) { out.emplace_back(fd, i.stack_id); });
    return out;
  }

  FdTable table_;
};

TEST_F(FdTableTest, EmptyTableHasNothing) {
  FdInfo out;
  EXPECT_FALSE(table_.lookup(3, &out));
  EXPECT_FALSE(table_.erase(3, &out));
  table_.erase_range(0, ~0u);
  EXPECT_TRUE(contents().empty());
  EXPECT_EQ(table_.untracked(), 0u);
}

TEST_F(FdTableTest, RecordLookupErase) {
  ASSERT_TRUE(table_.record(7, info(42, Call::kOpenat, 01101)));
  FdInfo out;
  ASSERT_TRUE(table_.lookup(7, &out));
  EXPECT_EQ(out.stack_id, 42u);
  EXPECT_EQ(out.call, Call::kOpenat);
  EXPECT_EQ(out.flags, 01101u);
  EXPECT_STREQ(out.mode, "");
  EXPECT_FALSE(out.stream());
  EXPECT_FALSE(table_.lookup(6, &out));
  ASSERT_TRUE(table_.erase(7, &out));
  EXPECT_EQ(out.stack_id, 42u);
  EXPECT_FALSE(table_.lookup(7, &out));
  EXPECT_FALSE(table_.erase(7, nullptr));
}

TEST_F(FdTableTest, RecordOverwrites) {
  ASSERT_TRUE(table_.record(3, info(1)));
  ASSERT_TRUE(table_.record(3, info(2, Call::kDup2)));
  FdInfo out;
  ASSERT_TRUE(table_.lookup(3, &out));
  EXPECT_EQ(out.stack_id, 2u);
  EXPECT_EQ(out.call, Call::kDup2);
}

TEST_F(FdTableTest, StreamsKeepTheirMode) {
  ASSERT_TRUE(table_.record(4, info(1, Call::kFopen, 0, "w+")));
  ASSERT_TRUE(table_.record(5, info(1, Call::kFdopen, 0, "rb+ecm")));  // as long as it gets
  FdInfo out;
  ASSERT_TRUE(table_.lookup(4, &out));
  EXPECT_TRUE(out.stream());
  EXPECT_STREQ(out.mode, "w+");
  ASSERT_TRUE(table_.lookup(5, &out));
  EXPECT_STREQ(out.mode, "rb+ecm");
  ASSERT_TRUE(table_.record(4, info(2)));  // the number reused by a plain descriptor
  ASSERT_TRUE(table_.lookup(4, &out));
  EXPECT_FALSE(out.stream());
  EXPECT_STREQ(out.mode, "");
}

TEST_F(FdTableTest, StreamsKeepTheirObject) {
  FdInfo stream = info(1, Call::kFopen, 0, "r");
  stream.stream_object = 0x7f0000001000;
  stream.stream_size = 472;
  ASSERT_TRUE(table_.record(8, stream));
  FdInfo out;
  ASSERT_TRUE(table_.erase(8, &out));
  EXPECT_EQ(out.stream_object, 0x7f0000001000u);
  EXPECT_EQ(out.stream_size, 472u);
  ASSERT_TRUE(table_.record(8, info(2)));
  ASSERT_TRUE(table_.lookup(8, &out));
  EXPECT_EQ(out.stream_object, 0u);
  EXPECT_EQ(out.stream_size, 0u);
}

TEST_F(FdTableTest, BeyondCapacityIsCountedNotRecorded) {
  EXPECT_FALSE(table_.record(-1, info(1)));
  EXPECT_EQ(table_.untracked(), 0u);  // not a descriptor at all
  EXPECT_FALSE(table_.record(FdTable::kCapacity, info(1)));
  EXPECT_FALSE(table_.record(FdTable::kCapacity + 5, info(1)));
  EXPECT_EQ(table_.untracked(), 2u);
  ASSERT_TRUE(table_.record(FdTable::kCapacity - 1, info(9)));
  EXPECT_EQ(contents(), (std::vector<std::pair<int, uint32_t>>{{FdTable::kCapacity - 1, 9}}));
  FdInfo out;
  EXPECT_FALSE(table_.lookup(FdTable::kCapacity, &out));
  EXPECT_FALSE(table_.erase(-3, &out));
}

TEST_F(FdTableTest, ForEachInFdOrder) {
  for (int fd : {9, 3, 100, 4}) ASSERT_TRUE(table_.record(fd, info(static_cast<uint32_t>(fd))));
  EXPECT_EQ(contents(),
            (std::vector<std::pair<int, uint32_t>>{{3, 3}, {4, 4}, {9, 9}, {100, 100}}));
}

TEST_F(FdTableTest, EraseRangeIncludesBothEnds) {
  for (int fd = 3; fd <= 12; ++fd) ASSERT_TRUE(table_.record(fd, info(1)));
  table_.erase_range(5, 8);
  std::vector<int> left;
  table_.for_each([&](int fd, const FdInfo&) { left.push_back(fd); });
  EXPECT_EQ(left, (std::vector<int>{3, 4, 9, 10, 11, 12}));
  table_.erase_range(11, ~0u);  // closefrom(11)
  left.clear();
  table_.for_each([&](int fd, const FdInfo&) { left.push_back(fd); });
  EXPECT_EQ(left, (std::vector<int>{3, 4, 9, 10}));
  table_.erase_range(10, 9);  // first > last: nothing
  table_.erase_range(0, 3);
  left.clear();
  table_.for_each([&](int fd, const FdInfo&) { left.push_back(fd); });
  EXPECT_EQ(left, (std::vector<int>{4, 9, 10}));
}

TEST_F(FdTableTest, RestoreOnlyIntoAFreeEntry) {
  ASSERT_TRUE(table_.record(5, info(1)));
  FdInfo saved;
  ASSERT_TRUE(table_.erase(5, &saved));
  EXPECT_TRUE(table_.restore(5, saved));  // the dup2 that was to close it failed
  ASSERT_TRUE(table_.erase(5, &saved));
  ASSERT_TRUE(table_.record(5, info(2)));  // another thread's open got the number meanwhile
  EXPECT_FALSE(table_.restore(5, saved));
  FdInfo out;
  ASSERT_TRUE(table_.lookup(5, &out));
  EXPECT_EQ(out.stack_id, 2u);
}

TEST_F(FdTableTest, ResetAfterForkKeepsEntries) {
  ASSERT_TRUE(table_.record(3, info(1)));
  table_.reset_after_fork();
  FdInfo out;
  ASSERT_TRUE(table_.lookup(3, &out));
  EXPECT_EQ(out.stack_id, 1u);
}

// Threads record and erase their own fds (as opens and closes of distinct numbers do) and
// all hammer one shared fd (a program racing on a number): entries stay whole, nothing is
// lost or left behind.
TEST_F(FdTableTest, ThreadsRecordAndEraseConcurrently) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  constexpr int kShared = 3;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int round = 0; round < kRounds; ++round) {
        int fd = 10 + t * 100 + round % 100;
        uint32_t stack = static_cast<uint32_t>(fd * 7);
        ASSERT_TRUE(table_.record(fd, info(stack, Call::kSocket, stack)));
        FdInfo shared = info(static_cast<uint32_t>(t), Call::kPipe, static_cast<uint32_t>(t));
        table_.record(kShared, shared);
        FdInfo out;
        if (table_.lookup(kShared, &out)) {
          EXPECT_EQ(out.stack_id, out.flags);  // never torn
        }
        ASSERT_TRUE(table_.erase(fd, &out));
        ASSERT_EQ(out.stack_id, stack);
        ASSERT_EQ(out.flags, stack);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::pair<int, uint32_t>> left = contents();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].first, kShared);
  EXPECT_LT(left[0].second, static_cast<uint32_t>(kThreads));
}

}  // namespace
}  // namespace memtrack::rt
