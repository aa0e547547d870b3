// Unit tests for AllocTable: insert/lookup/erase, growth, backward-shift deletion, threads.
// Test-only code: may allocate freely; the table itself still maps its own memory.
#include "core/alloc_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace memtrack::core {
namespace {

static_assert(sizeof(AllocRecord) <= 40, "AllocRecord is passed by value (see alloc_table.h)");

// A shard's first mapping holds 512 records (alloc_table.cpp, kInitialCapacity).
constexpr size_t kInitialShardBytes = 512 * 16;  // 16-byte slots

AllocRecord make_record(uintptr_t ptr, uint64_t size, uint32_t stack_id,
                        AllocFamily family = AllocFamily::kMalloc) {
  AllocRecord rec;
  rec.ptr = ptr;
  rec.size = size;
  rec.stack_id = stack_id;
  rec.family = family;
  return rec;
}

// The table is about 4 KiB of shard headers, so tests keep it on the heap, and every test
// unmaps its slots at the end.
struct TableDeleter {
  void operator()(AllocTable* table) const {
    table->test_only_reset();
    delete table;
  }
};
using TablePtr = std::unique_ptr<AllocTable, TableDeleter>;

TablePtr new_table() {
  return TablePtr(new AllocTable());
}

// Pointers that look like malloc results: 16-byte aligned, increasing.
uintptr_t nth_pointer(size_t i) {
  return 0x7f0000000000u + i * 16;
}

TEST(AllocTableTest, EmptyTableHasNothing) {
  TablePtr table = new_table();
  AllocRecord out = make_record(1, 2, 3);
  EXPECT_FALSE(table->try_lookup(0x1000, &out));
  EXPECT_FALSE(table->try_erase(0x1000, &out));
  EXPECT_EQ(out.ptr, 1u);  // untouched on failure
  EXPECT_EQ(table->size(), 0u);
  EXPECT_EQ(table->mapped_bytes(), 0u);
}

TEST(AllocTableTest, InsertLookupErase) {
  TablePtr table = new_table();
  AllocRecord rec = make_record(0x5000, 128, 7, AllocFamily::kNewArray);
  rec.aligned = 1;
  ASSERT_TRUE(table->try_insert(rec));
  EXPECT_EQ(table->size(), 1u);

  AllocRecord out;
  ASSERT_TRUE(table->try_lookup(0x5000, &out));
  EXPECT_EQ(out.ptr, 0x5000u);
  EXPECT_EQ(out.size, 128u);
  EXPECT_EQ(out.stack_id, 7u);
  EXPECT_EQ(out.family, AllocFamily::kNewArray);
  EXPECT_EQ(out.aligned, 1);
  EXPECT_FALSE(table->try_lookup(0x5010, &out));

  AllocRecord erased;
  ASSERT_TRUE(table->try_erase(0x5000, &erased));
  EXPECT_EQ(erased.ptr, 0x5000u);
  EXPECT_EQ(erased.size, 128u);
  EXPECT_EQ(erased.stack_id, 7u);
  EXPECT_EQ(erased.family, AllocFamily::kNewArray);
  EXPECT_EQ(table->size(), 0u);
  EXPECT_FALSE(table->try_lookup(0x5000, &out));
  EXPECT_FALSE(table->try_erase(0x5000, &erased));
}

TEST(AllocTableTest, ClearErasesEveryRecordAndTheTableTakesNewOnes) {
  TablePtr table = new_table();
  for (size_t i = 0; i < 1000; ++i) {
    ASSERT_TRUE(table->try_insert(make_record(nth_pointer(i), 32, 1)));
  }
  size_t mapped = table->mapped_bytes();
  table->clear();
  EXPECT_EQ(table->size(), 0u);
  EXPECT_EQ(table->totals().live_bytes, 0u);
  EXPECT_EQ(table->mapped_bytes(), mapped);  // kept for the next attach
  AllocRecord out;
  EXPECT_FALSE(table->try_lookup(nth_pointer(5), &out));
  ASSERT_TRUE(table->try_insert(make_record(nth_pointer(5), 48, 2)));
  ASSERT_TRUE(table->try_lookup(nth_pointer(5), &out));
  EXPECT_EQ(out.size, 48u);
  EXPECT_EQ(table->size(), 1u);
}

TEST(AllocTableTest, InsertOfKnownPointerOverwrites) {
  TablePtr table = new_table();
  ASSERT_TRUE(table->try_insert(make_record(0x9000, 10, 1, AllocFamily::kMalloc)));
  ASSERT_TRUE(table->try_insert(make_record(0x9000, 20, 2, AllocFamily::kNew)));
  EXPECT_EQ(table->size(), 1u);
  AllocRecord out;
  ASSERT_TRUE(table->try_lookup(0x9000, &out));
  EXPECT_EQ(out.size, 20u);
  EXPECT_EQ(out.stack_id, 2u);
  EXPECT_EQ(out.family, AllocFamily::kNew);
  ASSERT_TRUE(table->try_erase(0x9000, &out));
  EXPECT_EQ(table->size(), 0u);
  EXPECT_FALSE(table->try_lookup(0x9000, &out));
}

// The quarantine orders two frees of one address by these numbers (runtime/record/misuse.cpp).
TEST(AllocTableTest, EraseSequenceGrowsForEachEraseOfAnAddressAndNoRestoreTakesItBack) {
  TablePtr table = new_table();
  AllocRecord out;
  uint64_t first = 0;
  uint64_t second = 0;
  uint64_t third = 0;
  ASSERT_TRUE(table->try_insert(make_record(0x7000, 16, 1)));
  ASSERT_TRUE(table->try_erase(0x7000, &out, &first));
  EXPECT_GE(first, 1u);                  // never 0: the quarantine's "entry being written"
  ASSERT_TRUE(table->try_restore(out));  // a realloc that failed puts the record back
  ASSERT_TRUE(table->try_erase(0x7000, &out, &second));
  EXPECT_GT(second, first);
  // Erases of other blocks in between, then the address is handed out again.
  for (uintptr_t p = 0x7010; p < 0x7400; p += 16) {
    ASSERT_TRUE(table->try_insert(make_record(p, 16, 1)));
    ASSERT_TRUE(table->try_erase(p, &out));
  }
  ASSERT_TRUE(table->try_insert(make_record(0x7000, 32, 2)));
  ASSERT_TRUE(table->try_erase(0x7000, &out, &third));
  EXPECT_GT(third, second);
  EXPECT_FALSE(table->try_erase(0x7000, &out, &third));
}

TEST(AllocTableTest, MappedBytesGrowsPerShardAndNeverShrinks) {
  TablePtr table = new_table();
  ASSERT_TRUE(table->try_insert(make_record(0x4000, 1, 1)));
  EXPECT_EQ(table->mapped_bytes(), kInitialShardBytes);
  // Overwriting maps nothing new.
  ASSERT_TRUE(table->try_insert(make_record(0x4000, 2, 1)));
  EXPECT_EQ(table->mapped_bytes(), kInitialShardBytes);
  AllocRecord out;
  ASSERT_TRUE(table->try_erase(0x4000, &out));
  EXPECT_EQ(table->size(), 0u);
  EXPECT_EQ(table->mapped_bytes(), kInitialShardBytes);
  table->test_only_reset();
  EXPECT_EQ(table->mapped_bytes(), 0u);
  EXPECT_EQ(table->size(), 0u);
  EXPECT_FALSE(table->try_lookup(0x4000, &out));
}

// Checks every record in [0, n) with `present(i)` against the table.
template <typename Present>
void expect_contents(AllocTable& table, size_t n, Present present) {
  size_t mismatches = 0;
  for (size_t i = 0; i < n; ++i) {
    AllocRecord out;
    bool found = table.try_lookup(nth_pointer(i), &out);
    if (found != present(i) ||
        (found && (out.size != i + 1 || out.stack_id != static_cast<uint32_t>(i % 1000)))) {
      ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(AllocTableTest, ManyInsertsGrowThenEraseEveryOther) {
  constexpr size_t kCount = 200000;
  TablePtr table = new_table();
  for (size_t i = 0; i < kCount; ++i) {
    ASSERT_TRUE(
        table->try_insert(make_record(nth_pointer(i), i + 1, static_cast<uint32_t>(i % 1000))));
  }
  EXPECT_EQ(table->size(), kCount);
  expect_contents(*table, kCount, [](size_t) { return true; });

  // Every shard is a whole number of initial mappings (capacities are powers of two), and
  // the header promises 21-43 bytes of table per live allocation once shards have grown.
  size_t mapped = table->mapped_bytes();
  EXPECT_EQ(mapped % kInitialShardBytes, 0u);
  EXPECT_GE(mapped, kCount * 21);
  EXPECT_LE(mapped, kCount * 43);

  size_t visited = 0;
  uint64_t size_sum = 0;
  table->for_each([&](const AllocRecord& rec) {
    ++visited;
    size_sum += rec.size;
  });
  EXPECT_EQ(visited, kCount);
  EXPECT_EQ(size_sum, uint64_t{kCount} * (kCount + 1) / 2);

  // Erasing shifts entries back inside clusters, including clusters that wrap past the end
  // of a shard's slot array; every survivor must still be found afterwards.
  for (size_t i = 0; i < kCount; i += 2) {
    AllocRecord out;
    ASSERT_TRUE(table->try_erase(nth_pointer(i), &out)) << i;
    ASSERT_EQ(out.size, i + 1);
  }
  EXPECT_EQ(table->size(), kCount / 2);
  EXPECT_EQ(table->mapped_bytes(), mapped);
  expect_contents(*table, kCount, [](size_t i) { return i % 2 == 1; });

  for (size_t i = 1; i < kCount; i += 2) {
    AllocRecord out;
    ASSERT_TRUE(table->try_erase(nth_pointer(i), &out)) << i;
  }
  EXPECT_EQ(table->size(), 0u);
  expect_contents(*table, kCount, [](size_t) { return false; });
}

// Blocks served by mmap (page + 16) and aligned allocations share their low address bits.
// The slot hash must not turn that into one long probe cluster per shard: before the fix in
// AllocTable::hash_of, 400,000 MiB-aligned pointers took about 6 us per operation here.
TEST(AllocTableTest, AlignedPointersRoundTrip) {
  constexpr size_t kCount = 100000;
  for (uintptr_t stride : {uintptr_t{4096}, uintptr_t{1} << 20}) {
    TablePtr table = new_table();
    auto pointer = [stride](size_t i) { return uintptr_t{0x7e0000000000} + i * stride + 16; };
    for (size_t i = 0; i < kCount; ++i) {
      ASSERT_TRUE(table->try_insert(make_record(pointer(i), i, 1)));
    }
    EXPECT_EQ(table->size(), kCount);
    for (size_t i = 0; i < kCount; i += 2) {
      AllocRecord out;
      ASSERT_TRUE(table->try_erase(pointer(i), &out)) << i;
    }
    EXPECT_EQ(table->size(), kCount / 2);
    size_t mismatches = 0;
    for (size_t i = 0; i < kCount; ++i) {
      AllocRecord out;
      bool found = table->try_lookup(pointer(i), &out);
      if (found != (i % 2 == 1) || (found && out.size != i)) ++mismatches;
    }
    EXPECT_EQ(mismatches, 0u) << "stride " << stride;
  }
}

TEST(AllocTableTest, ThreadsWithDisjointPointers) {
  constexpr size_t kThreads = 4;
  constexpr size_t kPerThread = 50000;
  TablePtr table = new_table();
  std::vector<std::thread> threads;
  std::vector<size_t> failures(kThreads, 0);
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&table, &failures, t] {
      // Thread t owns pointers t, t + kThreads, t + 2 * kThreads, ...: it inserts all of
      // them, then erases those whose index within the thread is a multiple of 3.
      for (size_t k = 0; k < kPerThread; ++k) {
        size_t i = k * kThreads + t;
        if (!table->try_insert(make_record(nth_pointer(i), i + 1, static_cast<uint32_t>(t))))
          ++failures[t];
      }
      for (size_t k = 0; k < kPerThread; k += 3) {
        AllocRecord out;
        size_t i = k * kThreads + t;
        if (!table->try_erase(nth_pointer(i), &out) || out.size != i + 1) ++failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0u) << "thread " << t;

  constexpr size_t kErasedPerThread = (kPerThread + 2) / 3;
  EXPECT_EQ(table->size(), kThreads * (kPerThread - kErasedPerThread));
  size_t mismatches = 0;
  for (size_t i = 0; i < kThreads * kPerThread; ++i) {
    AllocRecord out;
    bool expected = (i / kThreads) % 3 != 0;
    bool found = table->try_lookup(nth_pointer(i), &out);
    if (found != expected || (found && out.stack_id != i % kThreads)) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(AllocTableTest, LockAllUnlockAllAndResetAfterForkKeepTableUsable) {
  TablePtr table = new_table();
  ASSERT_TRUE(table->try_insert(make_record(0x8000, 5, 1)));
  table->lock_all();
  table->unlock_all();
  table->lock_all();
  table->reset_after_fork();  // as in a fork child: all locks released
  ASSERT_TRUE(table->try_insert(make_record(0x8010, 6, 2)));
  EXPECT_EQ(table->size(), 2u);
}

TEST(AllocTableTest, PacksEveryFieldAndKeepsHugeSizesExact) {
  TablePtr table = new_table();
  AllocRecord rec = make_record(0x7ffd12345678, (uint64_t{1} << 40) + 12345, 0xabcdef);
  rec.family = AllocFamily::kNewArray;
  rec.aligned = 1;
  rec.epoch = kEpochModulus - 1;
  ASSERT_TRUE(table->try_insert(rec));
  ASSERT_TRUE(table->try_mark_ignored(rec.ptr));
  AllocRecord out;
  ASSERT_TRUE(table->try_lookup(rec.ptr, &out));
  EXPECT_EQ(out.ptr, rec.ptr);
  EXPECT_EQ(out.size, rec.size);
  EXPECT_EQ(out.stack_id, 0xabcdefu);
  EXPECT_EQ(out.family, AllocFamily::kNewArray);
  EXPECT_EQ(out.aligned, 1);
  EXPECT_EQ(out.ignored, 1);
  EXPECT_EQ(out.epoch, kEpochModulus - 1);
  EXPECT_EQ(out.reported, 0);
  table->for_each_marking_reported([](const AllocRecord&) { return true; });
  ASSERT_TRUE(table->try_lookup(rec.ptr, &out));
  EXPECT_EQ(out.reported, 1);
  EXPECT_EQ(out.epoch, kEpochModulus - 1);
  ASSERT_TRUE(table->try_erase(rec.ptr, &out));
  EXPECT_EQ(out.size, rec.size);
  // The huge entry was released with the block: a small block at that address is small.
  ASSERT_TRUE(table->try_insert(make_record(rec.ptr, 64, 1)));
  ASSERT_TRUE(table->try_lookup(rec.ptr, &out));
  EXPECT_EQ(out.size, 64u);
}

TEST(AllocTableTest, RejectsPointersItCannotPack) {
  TablePtr table = new_table();
  EXPECT_FALSE(table->try_insert(make_record(0x1004, 8, 1)));              // not 8-aligned
  EXPECT_FALSE(table->try_insert(make_record(uintptr_t{1} << 48, 8, 1)));  // above 2^48
  EXPECT_EQ(table->size(), 0u);
  AllocRecord out;
  EXPECT_FALSE(table->try_erase(0x1004, &out));
}

TEST(AllocTableTest, TotalsCountInsertsErasesOverwritesAndRestores) {
  TablePtr table = new_table();
  ASSERT_TRUE(table->try_insert(make_record(0x1000, 100, 1)));
  ASSERT_TRUE(table->try_insert(make_record(0x2000, 50, 1)));
  ASSERT_TRUE(table->try_insert(make_record(0x2000, 70, 1)));  // its free went untracked
  AllocRecord out;
  ASSERT_TRUE(table->try_erase(0x1000, &out));
  ASSERT_TRUE(table->try_restore(out));  // a failed realloc puts the block back
  AllocTotals totals = table->totals();
  EXPECT_EQ(totals.inserted, 3u);
  EXPECT_EQ(totals.inserted_bytes, 220u);
  EXPECT_EQ(totals.erased, 1u);
  EXPECT_EQ(totals.live, 2u);
  EXPECT_EQ(totals.live_bytes, 170u);
}

}  // namespace
}  // namespace memtrack::core
