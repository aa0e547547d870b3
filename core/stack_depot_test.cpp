// Unit tests for StackDepot: dedup, dense ids, round trips, hash collisions, threads.
// Test-only code: may allocate. A depot never unmaps its memory; tests accept that leak.
#include "core/stack_depot.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace memtrack::core {
namespace {

using Frames = std::vector<uintptr_t>;

// About 2 KiB of locks and id-block pointers; kept off the stack like the runtime's static.
std::unique_ptr<StackDepot> new_depot() {
  return std::make_unique<StackDepot>();
}

uint32_t intern(StackDepot& depot, const Frames& frames) {
  return depot.intern(frames.data(), static_cast<uint32_t>(frames.size()));
}

Frames frames_of(const StackView& view) {
  return Frames(view.frames, view.frames + view.size);
}

// A deterministic stack, distinct for every `i`, with 1..12 frames.
Frames nth_stack(uint32_t i) {
  Frames frames(1 + i % 12);
  for (size_t k = 0; k < frames.size(); ++k) frames[k] = 0x400000u + i * 64 + k;
  return frames;
}

TEST(StackDepotTest, EmptyDepot) {
  auto depot = new_depot();
  EXPECT_EQ(depot->size(), 0u);
  EXPECT_EQ(depot->mapped_bytes(), 0u);
  EXPECT_EQ(depot->get(StackDepot::kInvalidId).frames, nullptr);
  EXPECT_EQ(depot->get(1).frames, nullptr);
  EXPECT_EQ(depot->get(1).size, 0u);
}

TEST(StackDepotTest, SameFramesSameIdDifferentFramesDifferentId) {
  auto depot = new_depot();
  Frames a = {0x401000, 0x402000, 0x403000};
  Frames a_copy = a;
  Frames b = {0x401000, 0x402000, 0x403001};  // differs in the last frame
  Frames a_prefix = {0x401000, 0x402000};     // same frames, shorter
  EXPECT_EQ(intern(*depot, a), 1u);
  EXPECT_EQ(intern(*depot, a_copy), 1u);
  EXPECT_EQ(intern(*depot, b), 2u);
  EXPECT_EQ(intern(*depot, a_prefix), 3u);
  EXPECT_EQ(intern(*depot, b), 2u);
  EXPECT_EQ(depot->size(), 3u);
}

TEST(StackDepotTest, GetReturnsIdenticalFrames) {
  auto depot = new_depot();
  Frames a = {0x10, 0x20, 0x30, 0x40};
  Frames b = {0xdeadbeef};
  uint32_t id_a = intern(*depot, a);
  uint32_t id_b = intern(*depot, b);
  StackView view_a = depot->get(id_a);
  ASSERT_NE(view_a.frames, nullptr);
  EXPECT_EQ(frames_of(view_a), a);
  EXPECT_NE(view_a.frames, a.data());  // the depot keeps its own copy
  EXPECT_EQ(frames_of(depot->get(id_b)), b);
  EXPECT_EQ(depot->get(0).frames, nullptr);
  EXPECT_EQ(depot->get(3).frames, nullptr);
  EXPECT_EQ(depot->get(0xffffffffu).frames, nullptr);
}

TEST(StackDepotTest, EmptyStackHasItsOwnId) {
  auto depot = new_depot();
  EXPECT_EQ(depot->intern(nullptr, 0), 1u);
  Frames one = {0x1234};
  EXPECT_EQ(intern(*depot, one), 2u);
  Frames none;
  EXPECT_EQ(intern(*depot, none), 1u);
  StackView view = depot->get(1);
  EXPECT_NE(view.frames, nullptr);
  EXPECT_EQ(view.size, 0u);
  EXPECT_EQ(depot->size(), 2u);
}

TEST(StackDepotTest, MappedBytesIsCountedOnce) {
  auto depot = new_depot();
  Frames a = {1, 2, 3};
  EXPECT_EQ(intern(*depot, a), 1u);
  // The first stack maps the bucket array (2^18 pointers), one 1 MiB node chunk and one id
  // block of 65,536 node pointers (stack_depot.h).
  const size_t after_first = (size_t{1} << 18) * 8 + (size_t{1} << 20) + 65536 * 8;
  EXPECT_EQ(depot->mapped_bytes(), after_first);
  EXPECT_EQ(intern(*depot, a), 1u);
  EXPECT_EQ(depot->mapped_bytes(), after_first);
  Frames b = {4};
  EXPECT_EQ(intern(*depot, b), 2u);  // fits in the chunk and id block already mapped
  EXPECT_EQ(depot->mapped_bytes(), after_first);
}

TEST(StackDepotTest, HundredThousandDistinctStacksRoundTrip) {
  constexpr uint32_t kCount = 100000;  // more than one 65,536-entry id block
  auto depot = new_depot();
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(intern(*depot, nth_stack(i)), i + 1) << i;
  }
  EXPECT_EQ(depot->size(), kCount);
  size_t mismatches = 0;
  for (uint32_t i = 0; i < kCount; ++i) {
    if (frames_of(depot->get(i + 1)) != nth_stack(i)) ++mismatches;
    if (intern(*depot, nth_stack(i)) != i + 1) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(depot->size(), kCount);
  EXPECT_EQ(depot->get(kCount + 1).frames, nullptr);
}

TEST(StackDepotTest, StackLargerThanAChunkRoundTrips) {
  auto depot = new_depot();
  Frames huge(200000);  // 1.6 MB of frames, more than one 1 MiB storage chunk
  for (size_t k = 0; k < huge.size(); ++k) huge[k] = k * 7 + 1;
  Frames small = {5, 6};
  EXPECT_EQ(intern(*depot, small), 1u);
  EXPECT_EQ(intern(*depot, huge), 2u);
  EXPECT_EQ(intern(*depot, huge), 2u);
  EXPECT_EQ(frames_of(depot->get(2)), huge);
  EXPECT_EQ(frames_of(depot->get(1)), small);
}

// Mirrors one step of StackDepot::hash_frames; the test checks below that the constructed
// stacks really collide, so a change to the hash shows up as a failed precondition.
uint64_t hash_step(uint64_t h, uintptr_t frame) {
  h ^= static_cast<uint64_t>(frame);
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

TEST(StackDepotTest, FullHashCollisionsKeepStacksApart) {
  // Two-frame stacks (f0, f1) whose state after the last xor is equal hash identically.
  const uint64_t seed = 0xcbf29ce484222325ull;
  Frames a = {0x401000, 0x402000};
  Frames b = {0x501000, 0};
  b[1] = a[1] ^ hash_step(seed, a[0]) ^ hash_step(seed, b[0]);
  Frames c = {0x601000, 0};
  c[1] = a[1] ^ hash_step(seed, a[0]) ^ hash_step(seed, c[0]);
  ASSERT_EQ(StackDepot::hash_frames(a.data(), 2), StackDepot::hash_frames(b.data(), 2));
  ASSERT_EQ(StackDepot::hash_frames(a.data(), 2), StackDepot::hash_frames(c.data(), 2));

  auto depot = new_depot();
  EXPECT_EQ(intern(*depot, a), 1u);
  EXPECT_EQ(intern(*depot, b), 2u);
  EXPECT_EQ(intern(*depot, c), 3u);
  EXPECT_EQ(intern(*depot, a), 1u);
  EXPECT_EQ(intern(*depot, b), 2u);
  EXPECT_EQ(intern(*depot, c), 3u);
  EXPECT_EQ(frames_of(depot->get(1)), a);
  EXPECT_EQ(frames_of(depot->get(2)), b);
  EXPECT_EQ(frames_of(depot->get(3)), c);
  EXPECT_EQ(depot->size(), 3u);
}

TEST(StackDepotTest, ThreadsInterningOverlappingStacksAgreeOnIds) {
  constexpr size_t kThreads = 4;
  constexpr uint32_t kPerThread = 20000;
  constexpr uint32_t kStride = kPerThread / 2;  // thread t uses stacks [t*kStride, +kPerThread)
  constexpr uint32_t kDistinct = kStride * (kThreads - 1) + kPerThread;
  auto depot = new_depot();
  std::vector<std::vector<uint32_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&depot, &ids, t] {
      ids[t].resize(kPerThread);
      // Odd threads walk their range backwards so that the overlaps race from both ends.
      for (uint32_t k = 0; k < kPerThread; ++k) {
        uint32_t j = t % 2 == 0 ? k : kPerThread - 1 - k;
        ids[t][j] = intern(*depot, nth_stack(static_cast<uint32_t>(t) * kStride + j));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(depot->size(), kDistinct);
  std::vector<uint32_t> id_of(kDistinct, 0);
  size_t disagreements = 0;
  for (size_t t = 0; t < kThreads; ++t) {
    for (uint32_t j = 0; j < kPerThread; ++j) {
      uint32_t& known = id_of[t * kStride + j];
      if (known != 0 && known != ids[t][j]) ++disagreements;
      known = ids[t][j];
    }
  }
  EXPECT_EQ(disagreements, 0u);
  // Ids are exactly 1..kDistinct, and each one maps back to its stack.
  std::set<uint32_t> distinct_ids(id_of.begin(), id_of.end());
  EXPECT_EQ(distinct_ids.size(), size_t{kDistinct});
  EXPECT_EQ(*distinct_ids.begin(), 1u);
  EXPECT_EQ(*distinct_ids.rbegin(), kDistinct);
  size_t mismatches = 0;
  for (uint32_t i = 0; i < kDistinct; ++i) {
    if (frames_of(depot->get(id_of[i])) != nth_stack(i)) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(StackDepotTest, LockAllUnlockAllAndResetAfterForkKeepDepotUsable) {
  auto depot = new_depot();
  Frames a = {1};
  Frames b = {2};
  EXPECT_EQ(intern(*depot, a), 1u);
  depot->lock_all();
  depot->unlock_all();
  depot->lock_all();
  depot->reset_after_fork();
  EXPECT_EQ(intern(*depot, b), 2u);
  EXPECT_EQ(intern(*depot, a), 1u);
}

}  // namespace
}  // namespace memtrack::core
