// Stress tests of the descriptor table's bookkeeping under contention: 8 threads opening,
// closing, failing to close and closing ranges, with a reader walking the table, and
// threads racing on shared numbers from the first, mapping call on. Run under
// ThreadSanitizer by the tsan preset.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/stress_testing.h"
#include "runtime/fd/fd_table.h"

namespace memtrack::rt {
namespace {

using Call = core::result::ResourceCall;
using stress::kThreads;

// The entry for descriptor `fd` as thread `t` records it: every field derived from the two,
// so a torn entry (fields from two writers) shows.
FdInfo info_of(int fd, size_t t) {
  FdInfo info;
  info.stack_id = static_cast<uint32_t>(fd * 16 + t);
  info.flags = info.stack_id ^ 0x5a5a;
  info.call = t % 2 == 0 ? Call::kOpen : Call::kFopen;
  info.mode[0] = static_cast<char>('a' + t);
  info.stream_object = uintptr_t{info.stack_id} << 4;
  info.stream_size = info.stack_id + 1;
  return info;
}
bool whole(int fd, const FdInfo& info) {
  size_t t = info.stack_id % 16;
  FdInfo want = info_of(fd, t);
  return info.stack_id / 16 == static_cast<uint32_t>(fd) && info.flags == want.flags &&
         info.call == want.call && info.mode[0] == want.mode[0] && info.mode[1] == '\0' &&
         info.stream_object == want.stream_object && info.stream_size == want.stream_size;
}

struct TableDeleter {
  void operator()(FdTable* table) const {
    table->test_only_reset();
    delete table;
  }
};
using TablePtr = std::unique_ptr<FdTable, TableDeleter>;

// Thread t (of 7) owns descriptors 100 * (t + 1) .. + 99. Each round it opens them all,
// closes every third, fails to close every fifth (erase, then restore), and closes the rest
// of the block with one close_range. Thread 0 walks the table meanwhile.
TEST(FdTableStressTest, OpenCloseBookkeepingWithAWalker) {
  const size_t rounds = stress::scaled(1000);
  constexpr int kBlock = 100;
  TablePtr table(new FdTable());
  std::atomic<size_t> writers_left{kThreads - 1};
  std::vector<size_t> failures(kThreads, 0);
  stress::run_threads(kThreads, [&](size_t t) {
    if (t == 0) {
      for (size_t walks = 0; walks < 4 || writers_left.load() > 0; ++walks) {
        table->for_each([&](int fd, const FdInfo& info) {
          if (!whole(fd, info)) ++failures[0];
        });
      }
      return;
    }
    const int first = kBlock * static_cast<int>(t);
    for (size_t round = 0; round < rounds; ++round) {
      for (int fd = first; fd < first + kBlock; ++fd) {
        if (!table->record(fd, info_of(fd, t))) ++failures[t];
      }
      for (int fd = first; fd < first + kBlock; fd += 3) {
        FdInfo out;
        if (!table->erase(fd, &out) || !whole(fd, out)) ++failures[t];
      }
      for (int fd = first + 1; fd < first + kBlock; fd += 5) {
        FdInfo out;
        if (fd % 3 == first % 3) continue;  // closed above
        if (!table->erase(fd, &out) || !table->restore(fd, out)) ++failures[t];
        if (!table->lookup(fd, &out) || !whole(fd, out)) ++failures[t];
      }
      table->erase_range(static_cast<unsigned>(first), static_cast<unsigned>(first + kBlock - 1));
    }
    writers_left.fetch_sub(1);
  });
  for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0u) << "thread " << t;
  size_t left = 0;
  table->for_each([&](int, const FdInfo&) { ++left; });
  EXPECT_EQ(left, 0u);
  EXPECT_EQ(table->untracked(), 0u);
}

// All threads start on an unmapped table (racing to map it) and then fight over a few shared
// numbers: records, erases and restores of one number never mix two entries.
TEST(FdTableStressTest, ThreadsRacingOnSharedNumbersNeverTearEntries) {
  const size_t rounds = stress::scaled(50000);
  constexpr int kShared = 4;
  TablePtr table(new FdTable());
  std::vector<size_t> failures(kThreads, 0);
  stress::run_threads(kThreads, [&](size_t t) {
    for (size_t round = 0; round < rounds; ++round) {
      int fd = 3 + static_cast<int>((round + t) % kShared);
      FdInfo out;
      switch ((round + t) % 3) {
        case 0:
          if (!table->record(fd, info_of(fd, t))) ++failures[t];
          break;
        case 1:
          if (table->erase(fd, &out)) {
            if (!whole(fd, out)) ++failures[t];
            table->restore(fd, out);  // false when another thread recorded the number since
          }
          break;
        default:
          if (table->lookup(fd, &out) && !whole(fd, out)) ++failures[t];
          break;
      }
    }
  });
  for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0u) << "thread " << t;
  table->for_each([&](int fd, const FdInfo& info) {
    EXPECT_TRUE(fd >= 3 && fd < 3 + kShared) << fd;
    EXPECT_TRUE(whole(fd, info)) << fd;
  });
}

}  // namespace
}  // namespace memtrack::rt
