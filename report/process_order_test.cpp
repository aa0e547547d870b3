// Tests for the start order of processes (process_order.h).
#include "report/process_order.h"

#include <gtest/gtest.h>

namespace memtrack::report {
namespace {

std::vector<uint32_t> pids_in_order(const std::vector<ProcessIds>& processes, uint32_t first) {
  std::vector<uint32_t> pids;
  for (size_t i : start_order(processes, first)) pids.push_back(processes[i].pid);
  return pids;
}

TEST(StartOrder, WithoutAWrapIsPidOrder) {
  std::vector<ProcessIds> processes = {{300, 100}, {100, 1}, {200, 100}, {250, 200}};
  EXPECT_EQ(pids_in_order(processes, 0), (std::vector<uint32_t>{100, 200, 250, 300}));
}

TEST(StartOrder, TheFirstPidLeads) {
  std::vector<ProcessIds> processes = {{50, 7}, {100, 1}, {200, 100}};
  EXPECT_EQ(pids_in_order(processes, 100), (std::vector<uint32_t>{100, 50, 200}));
}

TEST(StartOrder, AChildAfterAPidWrapComesAfterItsParent) {
  // 32760 started 300 and 32765; 300 (after the wrap) started 301 and 302.
  std::vector<ProcessIds> processes = {
      {301, 300}, {32765, 32760}, {300, 32760}, {32760, 4000}, {302, 300}};
  EXPECT_EQ(pids_in_order(processes, 0), (std::vector<uint32_t>{32760, 300, 301, 302, 32765}));
  EXPECT_EQ(pids_in_order(processes, 32760), (std::vector<uint32_t>{32760, 300, 301, 302, 32765}));
}

TEST(StartOrder, ACycleOfReusedPidsIsBrokenAtItsLowestPid) {
  std::vector<ProcessIds> processes = {{9, 5}, {5, 9}, {12, 9}};
  EXPECT_EQ(pids_in_order(processes, 0), (std::vector<uint32_t>{5, 9, 12}));
}

TEST(StartOrder, SortsAnythingWithPidAndPpid) {
  struct Process {
    uint32_t pid;
    uint32_t ppid;
    const char* name;
  };
  std::vector<Process> processes = {{5, 40000, "child"}, {40000, 1, "parent"}};
  sort_by_start(processes, 0);
  EXPECT_STREQ(processes[0].name, "parent");
  EXPECT_STREQ(processes[1].name, "child");
  EXPECT_TRUE(start_order({}, 0).empty());
}

}  // namespace
}  // namespace memtrack::report
