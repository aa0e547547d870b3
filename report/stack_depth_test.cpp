// limit_stack_depth: cutting and merging by the frames kept.
#include "report/stack_depth.h"

#include <gtest/gtest.h>

#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using testing::group;

Frame frame(uint64_t address, const std::string& function) {
  Frame f;
  f.address = address;
  f.function = function;
  return f;
}

TEST(StackDepth, MergesGroupsWhoseCutStacksAreEqual) {
  ProcessReport p;
  p.leaks.push_back(group(LeakKind::kDefinite, 10, 1, {frame(1, "a"), frame(2, "b")}));
  p.leaks.push_back(group(LeakKind::kDefinite, 30, 2, {frame(1, "a"), frame(3, "c")}));
  p.leaks.push_back(group(LeakKind::kIndirect, 5, 1, {frame(1, "a"), frame(3, "c")}));
  p.leaks.push_back(group(LeakKind::kDefinite, 20, 1, {frame(4, "d")}));
  limit_stack_depth(p, 1);
  ASSERT_EQ(p.leaks.size(), 3u);
  EXPECT_EQ(p.leaks[0].bytes, 40u);
  EXPECT_EQ(p.leaks[0].blocks, 3u);
  ASSERT_EQ(p.leaks[0].stack.size(), 1u);
  EXPECT_EQ(p.leaks[0].stack[0].function, "a");
  EXPECT_EQ(p.leaks[1].bytes, 20u);  // sorted by bytes again
  EXPECT_EQ(p.leaks[2].kind, LeakKind::kIndirect);
}

TEST(StackDepth, CutsEveryStackAndZeroKeepsThem) {
  ProcessReport p;
  ErrorReport e;
  e.stack = {frame(1, "a"), frame(2, "b"), frame(3, "c")};
  p.errors.push_back(e);
  CrashReport crash;
  crash.stack = {frame(5, "x"), frame(6, "y")};
  p.crash = crash;
  limit_stack_depth(p, 0);
  EXPECT_EQ(p.errors[0].stack.size(), 3u);
  limit_stack_depth(p, 2);
  EXPECT_EQ(p.errors[0].stack.size(), 2u);
  EXPECT_EQ(p.crash->stack.size(), 2u);
}

}  // namespace
}  // namespace memtrack::report
