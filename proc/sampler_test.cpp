// The sampler's growth accounting: growth since the first sample, the rate per minute, the
// "growing" mark after N increases in a row, pid reuse and processes that go away.
#include "proc/sampler.h"

#include <gtest/gtest.h>

#include "proc/test_tree.h"

namespace memtrack::top {
namespace {

using testing::stat_line;
using testing::TempTree;

class FixedNames : public UserNames {
 protected:
  std::string look_up(uid_t uid) override { return uid == 0 ? "root" : ""; }
};

class SamplerTest : public ::testing::Test {
 protected:
  void set_process(uint32_t pid, uint64_t rss_kb, uint64_t start = 1000, uint32_t uid = 0) {
    tree_.write(std::to_string(pid) + "/stat",
                stat_line(pid, "p" + std::to_string(pid), 'S', 1, 0, 0, 0, 1, start));
    tree_.write(std::to_string(pid) + "/status", "Uid:\t" + std::to_string(uid) + "\t" +
                                                     std::to_string(uid) + "\t0\t0\nVmRSS:\t" +
                                                     std::to_string(rss_kb) + " kB\n");
  }
  const ProcessRow* find(const Snapshot& s, uint32_t pid) {
    for (const ProcessRow& p : s.processes) {
      if (p.info.pid == pid) return &p;
    }
    return nullptr;
  }
  Snapshot sample() {
    now_ += 10;  // seconds
    return sampler_.sample(nullptr);
  }

  TempTree tree_;
  ProcFiles files_{tree_.root()};
  ProcReader reader_{files_, 4096};
  FixedNames names_;
  double now_ = 100;
  Sampler sampler_{reader_, names_, SamplerOptions{3}, [this] { return now_; }};
};

TEST_F(SamplerTest, FirstSampleHasNoGrowthAndNoRate) {
  set_process(10, 1000);
  Snapshot s = sample();
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.seconds, 0);
  EXPECT_EQ(s.processes[0].user, "root");
  EXPECT_EQ(s.processes[0].growth_kb, 0);
  EXPECT_FALSE(s.processes[0].kb_per_min);
  EXPECT_FALSE(s.processes[0].growing);
}

TEST_F(SamplerTest, NoRateBeforeTheProcessWasWatchedTenSeconds) {
  set_process(10, 1000);
  sampler_.sample(nullptr);
  now_ += 2;
  set_process(10, 200000);  // 199,000 KiB in 2 s: no rate yet, only growth
  Snapshot s = sampler_.sample(nullptr);
  EXPECT_EQ(s.processes[0].growth_kb, 199000);
  EXPECT_FALSE(s.processes[0].kb_per_min);
  now_ += 8;
  s = sampler_.sample(nullptr);
  EXPECT_DOUBLE_EQ(*s.processes[0].kb_per_min, 199000 * 6);
}

TEST_F(SamplerTest, GrowthAndRatePerMinute) {
  set_process(10, 1000);
  sample();
  set_process(10, 1600);
  Snapshot s = sample();
  EXPECT_EQ(s.seconds, 10);
  EXPECT_EQ(s.processes[0].growth_kb, 600);
  EXPECT_DOUBLE_EQ(*s.processes[0].kb_per_min, 3600);  // 600 KiB in 10 s
  set_process(10, 400);
  s = sample();
  EXPECT_EQ(s.processes[0].growth_kb, -600);
  EXPECT_DOUBLE_EQ(*s.processes[0].kb_per_min, -1800);
}

TEST_F(SamplerTest, GrowingAfterNIncreasesInARow) {
  uint64_t rss = 1000;
  set_process(10, rss);
  sample();
  for (int i = 1; i <= 3; ++i) {
    set_process(10, rss += 100);
    EXPECT_EQ(sample().processes[0].growing, i == 3) << "after " << i << " increases";
  }
  set_process(10, rss);  // unchanged: the streak ends
  EXPECT_FALSE(sample().processes[0].growing);
  set_process(10, rss += 1);
  EXPECT_FALSE(sample().processes[0].growing);
}

TEST_F(SamplerTest, PidReuseStartsAfresh) {
  set_process(10, 1000, 1000);
  sample();
  set_process(10, 5000, 1000);
  EXPECT_EQ(sample().processes[0].growth_kb, 4000);
  set_process(10, 9000, 2222);  // another process with the same pid
  Snapshot s = sample();
  EXPECT_EQ(s.processes[0].growth_kb, 0);
  EXPECT_FALSE(s.processes[0].kb_per_min);
}

TEST_F(SamplerTest, ProcessesThatGoAwayAreForgotten) {
  set_process(10, 1000);
  set_process(11, 1000);
  sample();
  tree_.remove("11");
  Snapshot s = sample();
  ASSERT_EQ(s.processes.size(), 1u);
  set_process(11, 3000);  // back, same start time: still a new sighting
  s = sample();
  EXPECT_EQ(find(s, 11)->growth_kb, 0);
}

TEST_F(SamplerTest, UnknownUserIsTheNumber) {
  set_process(10, 1000, 1000, 4242);
  EXPECT_EQ(sample().processes[0].user, "4242");
}

TEST_F(SamplerTest, ThreadsOnlyOfTheWantedProcesses) {
  for (uint32_t pid : {10, 20}) {
    std::string dir = std::to_string(pid);
    set_process(pid, 1000);
    tree_.write(dir + "/stat", stat_line(pid, "p", 'S', 1, 0, 0, 0, 2));
    tree_.write(dir + "/task/" + dir + "/stat", stat_line(pid, "p"));
    tree_.write(dir + "/task/" + std::to_string(pid + 1) + "/stat", stat_line(pid + 1, "q"));
  }
  Snapshot s = sampler_.sample([](const ProcessRow& row) { return row.info.pid == 20; });
  EXPECT_TRUE(s.with_threads);
  ASSERT_TRUE(find(s, 10) && find(s, 20));
  EXPECT_TRUE(find(s, 10)->info.threads.empty());
  ASSERT_EQ(find(s, 20)->info.threads.size(), 2u);
  EXPECT_EQ(find(s, 20)->info.threads[1].name, "q");
  tree_.remove("20/task");  // gone between its stat and its threads: left out
  s = sampler_.sample([](const ProcessRow&) { return true; });
  EXPECT_EQ(s.processes.size(), 1u);
  EXPECT_FALSE(sampler_.sample(nullptr).with_threads);
}

TEST(UserNames, RootHasAName) {
  UserNames names;
  EXPECT_EQ(names.name(0), "root");
  EXPECT_EQ(&names.name(0), &names.name(0));  // cached
  EXPECT_EQ(names.name(4242424), "4242424");
}

}  // namespace
}  // namespace memtrack::top
