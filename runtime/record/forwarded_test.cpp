// Tests of the set of blocks allocated for a signal handler inside the runtime scope
// (runtime/record/forwarded.h).
#include "runtime/record/forwarded.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/alloc_guard.h"

namespace memtrack::rt {
namespace {

const void* at(uintptr_t address) {
  return reinterpret_cast<const void*>(address);
}

TEST(ForwardedTest, KeptUntilForgottenOnce) {
  EXPECT_FALSE(forget_forwarded(at(0x7000100)));
  note_forwarded(at(0x7000100));
  note_forwarded(at(0x7000200));
  EXPECT_TRUE(forget_forwarded(at(0x7000100)));
  EXPECT_FALSE(forget_forwarded(at(0x7000100)));  // a second free is judged as any other
  EXPECT_TRUE(forget_forwarded(at(0x7000200)));
  EXPECT_FALSE(forget_forwarded(nullptr));
}

TEST(ForwardedTest, TheRuntimesOwnAllocationsAreNotKept) {
  {
    AllowAllocation allowed("the test");
    note_forwarded(at(0x7100100));
  }
  EXPECT_FALSE(forget_forwarded(at(0x7100100)));
}

TEST(ForwardedTest, ManyBlocksWithTheSameHomeAreKeptAsFarAsTheProbesReach) {
  // More blocks than the set holds: those that found room are found again, each once; the
  // others are not kept (their frees are judged as before).
  std::vector<uintptr_t> addresses;
  for (uintptr_t i = 0; i < 6000; ++i) addresses.push_back(0x7200000000 + i * 48);
  for (uintptr_t a : addresses) note_forwarded(at(a));
  size_t kept = 0;
  for (uintptr_t a : addresses) kept += forget_forwarded(at(a)) ? 1 : 0;
  EXPECT_GT(kept, 3000u);  // most of the 4,096 slots
  EXPECT_LE(kept, 4096u);
  for (uintptr_t a : addresses) EXPECT_FALSE(forget_forwarded(at(a)));
  // Emptied (tombstones), the set takes new blocks again.
  note_forwarded(at(0x7300000000));
  EXPECT_TRUE(forget_forwarded(at(0x7300000000)));
}

}  // namespace
}  // namespace memtrack::rt
