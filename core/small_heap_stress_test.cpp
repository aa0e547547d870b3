// Stress tests of SmallHeap under contention: 8 threads allocating, recording and freeing
// chunks of every class, half of them freed by another thread than the one that allocated
// them, while a live-mode walk marks records under them and threads retire. Run under
// ThreadSanitizer by the tsan preset.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "core/small_heap.h"
#include "core/stress_testing.h"

namespace memtrack::core {
namespace {

using stress::kThreads;

struct HeapDeleter {
  void operator()(SmallHeap* heap) const {
    heap->test_only_release();
    delete heap;
  }
};
using HeapPtr = std::unique_ptr<SmallHeap, HeapDeleter>;

// A block's size and stack id follow from its thread and number, so any record read back
// can be checked on its own; its first byte is its thread's number.
size_t size_of(size_t t, size_t i) {
  return (i * 131 + t * 17) % 3000 + 1;
}

// Chunks handed from one thread to the next, as a program's queue would.
struct Mailbox {
  std::mutex lock;
  std::vector<std::pair<void*, size_t>> blocks;  // (chunk, its owner thread)
};

TEST(SmallHeapStressTest, ThreadsAllocateFreeAcrossThreadsAndRetireUnderAWalk) {
  const size_t rounds = stress::scaled(20000);
  HeapPtr heap(new SmallHeap());
  ASSERT_TRUE(heap->try_init());
  std::vector<Mailbox> mailboxes(kThreads);
  std::vector<size_t> failures(kThreads, 0);
  std::vector<std::vector<void*>> kept(kThreads);
  std::atomic<bool> done{false};
  std::atomic<size_t> walks{0};
  std::thread walker([&] {
    while (!done.load(std::memory_order_acquire)) {
      heap->for_each_marking_reported([](const AllocRecord& rec) { return rec.size % 2 == 0; });
      walks.fetch_add(1, std::memory_order_relaxed);
    }
  });
  stress::run_threads(kThreads, [&](size_t t) {
    HeapThread self{};
    Mailbox& mine = mailboxes[t];
    Mailbox& next = mailboxes[(t + 1) % kThreads];
    for (size_t i = 0; i < rounds; ++i) {
      size_t size = size_of(t, i);
      auto* p = static_cast<unsigned char*>(heap->try_allocate(size, 0, self));
      if (p == nullptr) {
        ++failures[t];
        continue;
      }
      std::memset(p, static_cast<int>(t), size);
      AllocRecord rec;
      rec.ptr = reinterpret_cast<uintptr_t>(p);
      rec.size = size;
      rec.stack_id = static_cast<uint32_t>(t + 1);
      if (!heap->set_record(rec, self)) ++failures[t];
      if (i % 2 == 0) {
        std::lock_guard<std::mutex> guard(next.lock);
        next.blocks.emplace_back(p, t);
      } else if (i % 5 == 0) {
        kept[t].push_back(p);
      } else {
        AllocRecord out;
        uint64_t sequence = 0;
        if (!heap->try_erase(rec.ptr, &out, &sequence, self) || out.size != size) ++failures[t];
        if (!heap->try_deallocate(p, self)) ++failures[t];
      }
      if (i % 64 == 0) {
        std::vector<std::pair<void*, size_t>> taken;
        {
          std::lock_guard<std::mutex> guard(mine.lock);
          taken.swap(mine.blocks);
        }
        for (auto [q, owner] : taken) {
          AllocRecord out;
          uint64_t sequence = 0;
          if (*static_cast<unsigned char*>(q) != owner) ++failures[t];
          if (!heap->try_erase(reinterpret_cast<uintptr_t>(q), &out, &sequence, self) ||
              out.stack_id != owner + 1) {
            ++failures[t];
          }
          if (!heap->try_deallocate(q, self)) ++failures[t];
        }
      }
    }
    heap->retire_thread(self);
  });
  done.store(true, std::memory_order_release);
  walker.join();
  for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0u) << "thread " << t;
  // What is left: the kept blocks and the mail nobody collected.
  size_t left = 0;
  for (size_t t = 0; t < kThreads; ++t) left += kept[t].size() + mailboxes[t].blocks.size();
  EXPECT_EQ(heap->size(), left);
  AllocTotals totals = heap->totals();
  EXPECT_EQ(totals.live, left);
  EXPECT_EQ(totals.inserted, kThreads * rounds);
  EXPECT_GT(walks.load(), 0u);
}

}  // namespace
}  // namespace memtrack::core
