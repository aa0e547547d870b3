// Stress tests of StackDepot under contention: lock-free readers of stacks that other
// threads are publishing, and interning from 8 threads into a few crowded hash chains.
// Run under ThreadSanitizer by the tsan preset.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/stack_depot.h"
#include "core/stress_testing.h"

namespace memtrack::core {
namespace {

using stress::kThreads;
using Frames = std::vector<uintptr_t>;

// A deterministic stack, distinct for every `i`, with 1..20 frames.
Frames nth_stack(size_t i) {
  Frames frames(1 + i % 20);
  for (size_t k = 0; k < frames.size(); ++k) frames[k] = 0x500000u + i * 128 + k;
  return frames;
}

bool holds(const StackDepot& depot, uint32_t id, size_t i) {
  StackView view = depot.get(id);
  return view.frames != nullptr && Frames(view.frames, view.frames + view.size) == nth_stack(i);
}

// Half the threads intern stacks and publish each id; the other half read every published
// id back through get(), which takes no lock, while the depot keeps growing.
TEST(StackDepotStressTest, ReadersGetStacksWhileWritersPublishThem) {
  const size_t stacks = stress::scaled(100000);
  constexpr size_t kWriters = kThreads / 2;
  auto depot = std::make_unique<StackDepot>();
  std::vector<std::atomic<uint32_t>> ids(stacks);
  std::atomic<size_t> writers_left{kWriters};
  std::vector<size_t> failures(kThreads, 0);
  stress::run_threads(kThreads, [&](size_t t) {
    if (t < kWriters) {
      for (size_t i = t; i < stacks; i += kWriters) {
        Frames frames = nth_stack(i);
        uint32_t id = depot->intern(frames.data(), static_cast<uint32_t>(frames.size()));
        if (id == StackDepot::kInvalidId) ++failures[t];
        ids[i].store(id, std::memory_order_release);
      }
      writers_left.fetch_sub(1);
      return;
    }
    for (bool last_pass = false; !last_pass;) {
      last_pass = writers_left.load() == 0;
      for (size_t i = t; i < stacks; i += kThreads - kWriters) {
        uint32_t id = ids[i].load(std::memory_order_acquire);
        if (id != StackDepot::kInvalidId && !holds(*depot, id, i)) ++failures[t];
      }
    }
  });
  for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0u) << "thread " << t;
  EXPECT_EQ(depot->size(), stacks);
}

// All threads intern the same stacks with only four distinct hashes (four long chains),
// each thread in its own order: every stack gets one id, and every thread sees that id.
TEST(StackDepotStressTest, ThreadsInterningIntoCrowdedChainsAgreeOnIds) {
  const size_t stacks = stress::scaled(5000);
  auto depot = std::make_unique<StackDepot>();
  std::vector<std::vector<uint32_t>> seen(kThreads, std::vector<uint32_t>(stacks));
  stress::run_threads(kThreads, [&](size_t t) {
    for (size_t n = 0; n < stacks; ++n) {
      size_t i = t % 2 == 0 ? (n + t * 97) % stacks : stacks - 1 - (n + t * 97) % stacks;
      Frames frames = nth_stack(i);
      seen[t][i] = depot->intern_hashed(frames.data(), static_cast<uint32_t>(frames.size()), i % 4);
    }
  });
  size_t disagreements = 0;
  size_t wrong = 0;
  for (size_t i = 0; i < stacks; ++i) {
    for (size_t t = 1; t < kThreads; ++t) disagreements += seen[t][i] != seen[0][i] ? 1 : 0;
    wrong += holds(*depot, seen[0][i], i) ? 0 : 1;
  }
  EXPECT_EQ(disagreements, 0u);
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(depot->size(), stacks);
}

}  // namespace
}  // namespace memtrack::core
