// Selecting, sorting and nesting rows.
#include "proc/view.h"

#include <gtest/gtest.h>

namespace memtrack::top {
namespace {

ProcessRow row(uint32_t pid, uint32_t ppid, std::optional<uint64_t> rss, const std::string& user,
               const std::string& cmdline, int64_t growth = 0) {
  ProcessRow r;
  r.info.pid = pid;
  r.info.ppid = ppid;
  r.info.rss_kb = rss;
  r.info.uid = user == "root" ? 0 : 1000;
  r.info.name = cmdline.substr(0, cmdline.find(' '));
  r.info.cmdline = cmdline;
  r.user = user;
  r.growth_kb = growth;
  return r;
}

Snapshot snapshot() {
  Snapshot s;
  s.processes = {row(1, 0, 500, "root", "init"), row(20, 1, 3000, "alice", "Firefox --x", 50),
                 row(21, 20, 1000, "alice", "firefox-tab", 700),
                 row(30, 1, std::nullopt, "bob", "vim"), row(22, 20, 2000, "alice", "firefox-gpu")};
  s.processes[1].info.threads = {{20, 20, "firefox", 'S', 1}, {25, 20, "Renderer", 'R', 9}};
  return s;
}

std::vector<uint32_t> pids(const std::vector<ViewRow>& rows) {
  std::vector<uint32_t> out;
  for (const ViewRow& r : rows)
    out.push_back(r.thread ? r.thread->tid + 100000 : r.process->info.pid);
  return out;
}

TEST(SortColumns, NamesRoundTripAndCycle) {
  for (SortColumn c = SortColumn::kPid;;) {
    EXPECT_EQ(try_parse_sort_column(sort_column_name(c)), c);
    c = next_sort_column(c, 1);
    if (c == SortColumn::kPid) break;
  }
  EXPECT_EQ(next_sort_column(SortColumn::kPid, -1), SortColumn::kCommand);
  EXPECT_FALSE(try_parse_sort_column("RSS"));
  EXPECT_EQ(sort_column_list(), "pid, user, rss, pss, uss, swap, growth, rate, command");
}

TEST(Arrange, DefaultIsRssLargestFirstUnknownLast) {
  Snapshot s = snapshot();
  EXPECT_EQ(pids(arrange(s, {})), (std::vector<uint32_t>{20, 22, 21, 1, 30}));
  ViewOptions reversed;
  reversed.reverse = true;
  EXPECT_EQ(pids(arrange(s, reversed)), (std::vector<uint32_t>{30, 1, 21, 22, 20}));
}

TEST(Arrange, OtherColumns) {
  Snapshot s = snapshot();
  ViewOptions o;
  o.sort = SortColumn::kPid;
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{1, 20, 21, 22, 30}));
  o.sort = SortColumn::kUser;  // ties by pid
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{20, 21, 22, 30, 1}));
  o.sort = SortColumn::kGrowth;
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{21, 20, 1, 22, 30}));
  o.sort = SortColumn::kCommand;
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{20, 22, 21, 1, 30}));
}

TEST(Arrange, FilterMatchesCommandNameUserOrPid) {
  Snapshot s = snapshot();
  ViewOptions o;
  o.filter = "FIREFOX";
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{20, 22, 21}));
  o.filter = "bob";
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{30}));
  o.filter = "1";  // the pid; also part of no command here
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{1}));
  o.filter = "nothing";
  EXPECT_TRUE(arrange(s, o).empty());
}

TEST(Arrange, PidsUsersAndLimit) {
  Snapshot s = snapshot();
  ViewOptions o;
  o.pids = {30, 1};
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{1, 30}));
  o.pids.clear();
  o.users = {"0", "bob"};  // a uid or a name
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{1, 30}));
  o.users.clear();
  o.limit = 2;
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{20, 22}));
}

TEST(Arrange, ThreadsUnderTheirProcess) {
  Snapshot s = snapshot();
  ViewOptions o;
  o.threads = true;
  o.pids = {20};
  std::vector<ViewRow> rows = arrange(s, o);
  EXPECT_EQ(pids(rows), (std::vector<uint32_t>{20, 100020, 100025}));
  EXPECT_EQ(rows[1].tree_prefix, "|- ");
  EXPECT_EQ(rows[2].tree_prefix, "`- ");
}

TEST(Arrange, TreeByParentWithSortedSiblings) {
  Snapshot s = snapshot();
  ViewOptions o;
  o.tree = true;
  std::vector<ViewRow> rows = arrange(s, o);
  EXPECT_EQ(pids(rows), (std::vector<uint32_t>{1, 20, 22, 21, 30}));
  std::vector<std::string> prefixes;
  for (const ViewRow& r : rows) prefixes.push_back(r.tree_prefix);
  EXPECT_EQ(prefixes, (std::vector<std::string>{"", "|- ", "|  |- ", "|  `- ", "`- "}));
  o.filter = "firefox-";  // parent filtered out: its children become roots
  EXPECT_EQ(pids(arrange(s, o)), (std::vector<uint32_t>{22, 21}));
}

TEST(Arrange, TreeWithThreads) {
  Snapshot s = snapshot();
  ViewOptions o;
  o.tree = true;
  o.threads = true;
  o.pids = {1, 20, 21};
  std::vector<ViewRow> rows = arrange(s, o);
  EXPECT_EQ(pids(rows), (std::vector<uint32_t>{1, 20, 100020, 100025, 21}));
  EXPECT_EQ(rows[2].tree_prefix, "   |- ");
  EXPECT_EQ(rows[3].tree_prefix, "   |- ");  // a child process follows the threads
  EXPECT_EQ(rows[4].tree_prefix, "   `- ");
}

}  // namespace
}  // namespace memtrack::top
