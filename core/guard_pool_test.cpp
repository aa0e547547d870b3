#include "core/guard_pool.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>

#include "core/sys_linux.h"

namespace memtrack::core {
namespace {

using SlotState = GuardPool::SlotState;

struct Pool {
  explicit Pool(size_t slots, GuardSide side = GuardSide::kEnd) {
    EXPECT_TRUE(pool.init(slots, sys::page_size(), side, 42));
  }
  GuardPool pool;
};

TEST(GuardPool, BlockAtTheEndOfItsPage) {
  Pool p(4);
  size_t page = p.pool.page_size();
  for (size_t size : {8, 16, 24, 40, 4000}) {
    uintptr_t b = p.pool.allocate(size, 0, 7, 1);
    ASSERT_NE(b, 0u) << size;
    EXPECT_TRUE(p.pool.owns(b));
    // Sizes that are multiples of 8: the block ends at its page's end.
    EXPECT_EQ((b + size) % page, 0u) << size;
    EXPECT_EQ(b % 8, 0u);
    const GuardPool::Slot* s = p.pool.live_block(b);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->size, size);
    EXPECT_EQ(s->alloc_stack, 7u);
    uintptr_t changed = 1;
    const GuardPool::Slot* freed = nullptr;
    EXPECT_EQ(p.pool.free(b, 9, 1, &changed, &freed), GuardPool::FreeResult::kFreed);
    EXPECT_EQ(changed, 0u);
    EXPECT_EQ(freed, s);
  }
}

TEST(GuardPool, OtherSizesEndBeforeThePageEnd) {
  Pool p(1);
  size_t page = p.pool.page_size();
  uintptr_t b = p.pool.allocate(10, 0, 1, 1);
  ASSERT_NE(b, 0u);
  EXPECT_EQ(b % 8, 0u);  // the allocation table's unit
  EXPECT_EQ(page - (b + 10) % page, 6u);
  reinterpret_cast<volatile char*>(b)[10] = 0;  // in the 6 bytes: found by the pattern
  EXPECT_EQ(p.pool.first_changed_byte(*p.pool.live_block(b)), b + 10);
}

TEST(GuardPool, ExplicitAlignmentAndZeroBytes) {
  Pool p(4);
  uintptr_t b = p.pool.allocate(10, 64, 1, 1);
  ASSERT_NE(b, 0u);
  EXPECT_EQ(b % 64, 0u);
  uintptr_t zero = p.pool.allocate(0, 0, 1, 1);
  ASSERT_NE(zero, 0u);
  EXPECT_NE(p.pool.live_block(zero), nullptr);  // inside its own page, not on the guard
  EXPECT_EQ(p.pool.allocate(p.pool.page_size() + 1, 0, 1, 1), 0u);
  EXPECT_EQ(p.pool.allocate(8, p.pool.page_size() * 2, 1, 1), 0u);
}

TEST(GuardPool, StartSideAndPattern) {
  Pool p(2, GuardSide::kStart);
  uintptr_t b = p.pool.allocate(10, 0, 1, 1);  // at the page's start whatever its size
  ASSERT_NE(b, 0u);
  EXPECT_EQ(b % p.pool.page_size(), 0u);
  auto* bytes = reinterpret_cast<uint8_t*>(b);
  EXPECT_EQ(bytes[10], kGuardPattern);
  bytes[12] = 0;  // an overflow the guard page could not catch on this side
  const GuardPool::Slot* s = p.pool.live_block(b);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(p.pool.first_changed_byte(*s), b + 12);
  uintptr_t changed = 0;
  const GuardPool::Slot* freed = nullptr;
  EXPECT_EQ(p.pool.free(b, 3, 2, &changed, &freed), GuardPool::FreeResult::kFreed);
  EXPECT_EQ(changed, b + 12);
  EXPECT_EQ(freed->free_stack, 3u);
  EXPECT_EQ(freed->free_tid, 2u);
}

TEST(GuardPool, DoubleFreeAndInteriorPointersAreNotFreed) {
  Pool p(2);
  uintptr_t b = p.pool.allocate(32, 0, 1, 1);
  uintptr_t changed = 0;
  const GuardPool::Slot* s = nullptr;
  EXPECT_EQ(p.pool.free(b + 8, 1, 1, &changed, &s), GuardPool::FreeResult::kNotLive);
  EXPECT_EQ(p.pool.free(b, 1, 1, &changed, &s), GuardPool::FreeResult::kFreed);
  EXPECT_EQ(p.pool.free(b, 1, 1, &changed, &s), GuardPool::FreeResult::kNotLive);
}

TEST(GuardPool, FreedSlotsAreReusedOldestFirstAndAFullPoolSaysSo) {
  Pool p(3);
  uintptr_t a = p.pool.allocate(8, 0, 1, 1);
  uintptr_t b = p.pool.allocate(8, 0, 1, 1);
  uintptr_t c = p.pool.allocate(8, 0, 1, 1);
  ASSERT_NE(c, 0u);
  EXPECT_EQ(p.pool.allocate(8, 0, 1, 1), 0u);
  EXPECT_EQ(p.pool.pool_full(), 1u);
  uintptr_t changed = 0;
  const GuardPool::Slot* s = nullptr;
  p.pool.free(b, 1, 1, &changed, &s);
  p.pool.free(a, 1, 1, &changed, &s);
  EXPECT_EQ(p.pool.allocate(8, 0, 1, 1), b);  // freed first, reused first
  EXPECT_EQ(p.pool.allocate(8, 0, 1, 1), a);
  EXPECT_EQ(p.pool.placed(), 5u);
}

TEST(GuardPool, LocateNamesTheNearerBlock) {
  Pool p(2);
  size_t page = p.pool.page_size();
  uintptr_t a = p.pool.allocate(16, 0, 1, 1);
  GuardPool::Culprit past_a = p.pool.locate(a + 16);
  EXPECT_TRUE(past_a.in_guard_page);
  EXPECT_EQ(past_a.slot, p.pool.live_block(a));
  // Slot 1 is unused: the whole guard page after slot 0 is slot 0's.
  EXPECT_EQ(p.pool.locate(a + 16 + page - 1).slot, p.pool.live_block(a));
  uintptr_t b = p.pool.allocate(16, 0, 1, 1);
  // Between them, the nearer block: a's end is `page` bytes from the guard page's last byte,
  // b's start (at the end of its page) page - 15 bytes.
  uintptr_t last_guard_byte = b - (page - 16) - 1;
  EXPECT_EQ(p.pool.locate(a + 16 + 100).slot, p.pool.live_block(a));
  EXPECT_EQ(p.pool.locate(last_guard_byte).slot, p.pool.live_block(b));
  // Before slot 0 there is no block.
  uintptr_t changed = 0;
  const GuardPool::Slot* s = nullptr;
  p.pool.free(a, 1, 1, &changed, &s);
  GuardPool::Culprit freed = p.pool.locate(a);
  EXPECT_FALSE(freed.in_guard_page);
  ASSERT_EQ(freed.slot, s);
  EXPECT_EQ(freed.slot->state.load(), SlotState::kFreed);
  EXPECT_FALSE(p.pool.owns(a - 2 * page - 1));
}

TEST(GuardPool, OpenPageRetiresItsSlot) {
  Pool p(2);
  uintptr_t a = p.pool.allocate(16, 0, 1, 1);
  uintptr_t changed = 0;
  const GuardPool::Slot* s = nullptr;
  p.pool.free(a, 1, 1, &changed, &s);
  ASSERT_TRUE(p.pool.open_page_of(a));
  EXPECT_EQ(*reinterpret_cast<volatile uint8_t*>(a), kGuardPattern);  // readable again
  uintptr_t b = p.pool.allocate(16, 0, 1, 1);
  EXPECT_NE(b, a);  // a's slot is never used again
  EXPECT_EQ(p.pool.allocate(16, 0, 1, 1), 0u);
}

TEST(GuardPoolDeathTest, OverflowAndUseAfterFreeFault) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Pool p(2);
  uintptr_t a = p.pool.allocate(16, 0, 1, 1);
  // Death, not necessarily by SIGSEGV: under AddressSanitizer its own handler reports the
  // fault and exits.
  EXPECT_DEATH(reinterpret_cast<volatile char*>(a)[16] = 1, "");
  uintptr_t changed = 0;
  const GuardPool::Slot* s = nullptr;
  p.pool.free(a, 1, 1, &changed, &s);
  EXPECT_DEATH((void)reinterpret_cast<volatile char*>(a)[0], "");
}

}  // namespace
}  // namespace memtrack::core
