// Stress tests of AllocTable under contention: 8 threads inserting, erasing and looking up
// in the same shards while they grow, racing erases of shared blocks, and a live-mode walk
// over a table that changes under it. Run under ThreadSanitizer by the tsan preset.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/alloc_table.h"
#include "core/stress_testing.h"

namespace memtrack::core {
namespace {

using stress::kThreads;

struct TableDeleter {
  void operator()(AllocTable* table) const {
    table->test_only_reset();
    delete table;
  }
};
using TablePtr = std::unique_ptr<AllocTable, TableDeleter>;

// Block i: a malloc-like pointer, and a size and stack id derived from it, so any record
// read back can be checked on its own, whichever thread wrote it.
uintptr_t pointer_of(size_t i) {
  return 0x7f0000000000u + i * 16;
}
AllocRecord record_of(size_t i) {
  AllocRecord rec;
  rec.ptr = pointer_of(i);
  rec.size = i % 4096 + 1;
  rec.stack_id = static_cast<uint32_t>(i % 1000003 + 1);
  rec.family = static_cast<AllocFamily>(i % 3);
  return rec;
}
bool whole(const AllocRecord& rec) {
  if (rec.ptr < pointer_of(0) || (rec.ptr - pointer_of(0)) % 16 != 0) return false;
  AllocRecord want = record_of((rec.ptr - pointer_of(0)) / 16);
  return rec.size == want.size && rec.stack_id == want.stack_id && rec.family == want.family;
}

// Thread t owns blocks t, t + kThreads, ...: in rounds it inserts a batch, erases every
// other block of it, and looks up the batch its neighbour is working on. Each thread keeps
// a model of its own blocks; at the end the table must match all models exactly.
TEST(AllocTableStressTest, ThreadsInsertEraseAndLookUpInSharedShards) {
  const size_t rounds = stress::scaled(100);
  constexpr size_t kBatch = 1000;
  TablePtr table(new AllocTable());
  std::vector<std::vector<bool>> live(kThreads, std::vector<bool>(rounds * kBatch, false));
  std::vector<size_t> failures(kThreads, 0);
  stress::run_threads(kThreads, [&](size_t t) {
    for (size_t round = 0; round < rounds; ++round) {
      for (size_t k = round * kBatch; k < (round + 1) * kBatch; ++k) {
        if (!table->try_insert(record_of(k * kThreads + t))) ++failures[t];
        live[t][k] = true;
      }
      for (size_t k = round * kBatch; k < (round + 1) * kBatch; k += 2) {
        AllocRecord out;
        if (!table->try_erase(pointer_of(k * kThreads + t), &out) || !whole(out)) ++failures[t];
        live[t][k] = false;
      }
      size_t neighbour = (t + 1) % kThreads;
      for (size_t k = round * kBatch; k < (round + 1) * kBatch; ++k) {
        AllocRecord out;
        if (table->try_lookup(pointer_of(k * kThreads + neighbour), &out) && !whole(out)) {
          ++failures[t];
        }
      }
    }
  });
  for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0u) << "thread " << t;

  size_t expected = 0;
  size_t mismatches = 0;
  for (size_t t = 0; t < kThreads; ++t) {
    for (size_t k = 0; k < live[t].size(); ++k) {
      AllocRecord out;
      bool found = table->try_lookup(pointer_of(k * kThreads + t), &out);
      if (found != live[t][k] || (found && !whole(out))) ++mismatches;
      expected += live[t][k] ? 1 : 0;
    }
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(table->size(), expected);
  AllocTotals totals = table->totals();
  EXPECT_EQ(totals.inserted, kThreads * rounds * kBatch);
  EXPECT_EQ(totals.erased, kThreads * rounds * kBatch / 2);
  EXPECT_EQ(totals.live, expected);
}

// Every thread tries to erase every one of a set of shared blocks, each starting at a
// different place: each block is erased exactly once, whole, and the table ends empty.
TEST(AllocTableStressTest, RacingErasesOfSharedBlocksSucceedOnce) {
  const size_t blocks = stress::scaled(200000);
  TablePtr table(new AllocTable());
  for (size_t i = 0; i < blocks; ++i) ASSERT_TRUE(table->try_insert(record_of(i)));
  std::vector<size_t> erased(kThreads, 0);
  std::vector<size_t> torn(kThreads, 0);
  stress::run_threads(kThreads, [&](size_t t) {
    for (size_t n = 0; n < blocks; ++n) {
      size_t i = (n + t * blocks / kThreads) % blocks;
      AllocRecord out;
      if (table->try_erase(pointer_of(i), &out)) {
        ++erased[t];
        if (!whole(out)) ++torn[t];
      }
    }
  });
  size_t total = 0;
  for (size_t t = 0; t < kThreads; ++t) {
    total += erased[t];
    EXPECT_EQ(torn[t], 0u) << "thread " << t;
  }
  EXPECT_EQ(total, blocks);
  EXPECT_EQ(table->size(), 0u);
  EXPECT_EQ(table->totals().live_bytes, 0u);
}

// Live mode: one thread walks the table, marking records, while the others allocate and
// free. The walk is not a snapshot, but every record it sees must be whole, and marking
// must not disturb the records of the other threads.
TEST(AllocTableStressTest, MarkingWalkWhileThreadsAllocateAndFree) {
  const size_t per_thread = stress::scaled(80000);
  TablePtr table(new AllocTable());
  std::atomic<size_t> writers_left{kThreads - 1};
  std::vector<size_t> failures(kThreads, 0);
  stress::run_threads(kThreads, [&](size_t t) {
    if (t == 0) {
      for (size_t walks = 0; walks < 4 || writers_left.load() > 0; ++walks) {
        table->for_each_marking_reported([&](const AllocRecord& rec) {
          if (!whole(rec)) ++failures[0];
          return rec.stack_id % 2 == 0;
        });
        (void)table->totals();
      }
      return;
    }
    for (size_t k = 0; k < per_thread; ++k) {
      size_t i = k * kThreads + t;
      if (!table->try_insert(record_of(i))) ++failures[t];
      if (k % 3 == 0) {
        AllocRecord out;
        if (!table->try_erase(pointer_of(i), &out) || !whole(out)) ++failures[t];
      }
    }
    writers_left.fetch_sub(1);
  });
  for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0u) << "thread " << t;
  EXPECT_EQ(table->size(), (kThreads - 1) * (per_thread - (per_thread + 2) / 3));
  size_t broken = 0;
  table->for_each([&](const AllocRecord& rec) {
    if (!whole(rec)) ++broken;
  });
  EXPECT_EQ(broken, 0u);
}

}  // namespace
}  // namespace memtrack::core
