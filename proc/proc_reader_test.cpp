// ProcReader against the committed fixture tree and against trees made here: vanished
// processes and threads, permission denied, kernel threads, statm fallback.
#include "proc/proc_reader.h"

#include <sys/stat.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "common/error.h"
#include "proc/test_tree.h"

namespace memtrack::top {
namespace {

using testing::FaultyProcFiles;
using testing::fixture_root;
using testing::stat_line;
using testing::TempTree;

constexpr uint64_t kPage = 4096;

TEST(ProcFiles, MissingRootIsAnError) {
  EXPECT_THROW(ProcFiles("/nonexistent/proc"), Error);
}

TEST(ProcFiles, ReadStatuses) {
  TempTree tree;
  tree.write("1/stat", "x");
  tree.write("big", std::string(100000, 'b'));
  ProcFiles files(tree.root());
  std::string out = "old";
  EXPECT_EQ(files.read("1/stat", &out), ReadStatus::kOk);
  EXPECT_EQ(out, "x");
  EXPECT_EQ(files.read("big", &out), ReadStatus::kOk);
  EXPECT_EQ(out.size(), 100000u);
  EXPECT_EQ(files.read("2/stat", &out), ReadStatus::kMissing);
  EXPECT_EQ(out, "");
  EXPECT_EQ(files.read("1", &out), ReadStatus::kError);  // EISDIR
}

TEST(ProcFiles, ModeZeroIsDeniedUnlessRoot) {
  TempTree tree;
  tree.write("1/smaps_rollup", "Pss: 1 kB\n");
  chmod((tree.root() + "/1/smaps_rollup").c_str(), 0);
  ProcFiles files(tree.root());
  std::string out;
  // Root reads mode-000 files (CAP_DAC_OVERRIDE); FaultyProcFiles covers EACCES as root.
  EXPECT_EQ(files.read("1/smaps_rollup", &out),
            geteuid() == 0 ? ReadStatus::kOk : ReadStatus::kDenied);
}

TEST(ProcFiles, ListsOnlyNumericEntries) {
  ProcFiles files(fixture_root());
  std::vector<uint32_t> pids;
  ASSERT_EQ(files.list_numeric("", &pids), ReadStatus::kOk);
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<uint32_t>{1, 2, 100, 150, 300, 400, 500, 600, 700, 800}));
  EXPECT_EQ(files.list_numeric("999/task", &pids), ReadStatus::kMissing);
}

TEST(TryParseU32, Bounds) {
  uint32_t n = 0;
  EXPECT_TRUE(try_parse_u32("4294967295", &n));
  EXPECT_EQ(n, 4294967295u);
  EXPECT_FALSE(try_parse_u32("4294967296", &n));
  EXPECT_FALSE(try_parse_u32("", &n));
  EXPECT_FALSE(try_parse_u32("-1", &n));
  EXPECT_FALSE(try_parse_u32("12a", &n));
}

class FixtureTest : public ::testing::Test {
 protected:
  ProcFiles files_{fixture_root()};
  ProcReader reader_{files_, kPage};
};

TEST_F(FixtureTest, OrdinaryProcess) {
  std::optional<ProcessInfo> p = reader_.read_process(1, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pid, 1u);
  EXPECT_EQ(p->ppid, 0u);
  EXPECT_EQ(p->name, "init");
  EXPECT_EQ(p->cmdline, "/sbin/init splash");
  EXPECT_EQ(p->uid, 0u);
  EXPECT_FALSE(p->kernel_thread);
  EXPECT_EQ(p->rss_kb, 12000u);
  EXPECT_EQ(p->pss_kb, 4000u);
  EXPECT_EQ(p->uss_kb, 3500u);
  EXPECT_EQ(p->swap_kb, 0u);
  EXPECT_EQ(p->cpu_ticks, 15u);
  EXPECT_EQ(p->start_ticks, 1u);
  EXPECT_TRUE(p->threads.empty());
}

TEST_F(FixtureTest, KernelThreadHasZeroMemory) {
  std::optional<ProcessInfo> p = reader_.read_process(2, true);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->kernel_thread);
  EXPECT_EQ(p->rss_kb, 0u);
  EXPECT_EQ(p->pss_kb, 0u);
  EXPECT_EQ(p->uss_kb, 0u);
  EXPECT_EQ(p->swap_kb, 0u);
  EXPECT_EQ(p->cmdline, "");
  EXPECT_EQ(display_command(*p), "[kthreadd]");
  ASSERT_EQ(p->threads.size(), 1u);  // a kernel thread is its own only thread
  EXPECT_EQ(p->threads[0].tid, 2u);
}

TEST_F(FixtureTest, ThreadsFromTask) {
  std::optional<ProcessInfo> p = reader_.read_process(100, true);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->uid, 4242u);
  EXPECT_EQ(p->swap_kb, 2048u);
  ASSERT_EQ(p->threads.size(), 3u);
  EXPECT_EQ(p->threads[1].tid, 101u);
  EXPECT_EQ(p->threads[1].tgid, 100u);
  EXPECT_EQ(p->threads[1].name, "worker-1");
  EXPECT_EQ(p->threads[1].state, 'R');
  EXPECT_EQ(p->threads[1].cpu_ticks, 200u);
  EXPECT_EQ(p->threads[2].name, "io worker)");
  EXPECT_EQ(p->threads[2].state, 'D');
}

TEST_F(FixtureTest, MissingSmapsRollupLeavesPssUssUnknown) {
  std::optional<ProcessInfo> p = reader_.read_process(150, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rss_kb, 3000u);
  EXPECT_FALSE(p->pss_kb);
  EXPECT_FALSE(p->uss_kb);
  EXPECT_EQ(p->ppid, 100u);
}

TEST_F(FixtureTest, NoVmRssFallsBackToStatm) {
  std::optional<ProcessInfo> p = reader_.read_process(300, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "my) (prog");
  EXPECT_EQ(p->rss_kb, 10240u);  // 2560 pages of 4 KiB
  EXPECT_EQ(p->swap_kb, 0u);     // from smaps_rollup, as status has no VmSwap
}

TEST_F(FixtureTest, LongCommandLineIsKeptWhole) {
  std::optional<ProcessInfo> p = reader_.read_process(400, false);
  ASSERT_TRUE(p);
  EXPECT_GT(p->cmdline.size(), 600u);
  EXPECT_EQ(p->cmdline.rfind("--option-39=value-39"), p->cmdline.size() - 20);
}

TEST_F(FixtureTest, MalformedAndVanishedAreSkipped) {
  EXPECT_FALSE(reader_.read_process(500, false));    // malformed stat
  EXPECT_FALSE(reader_.read_process(600, false));    // directory without files
  EXPECT_FALSE(reader_.read_process(12345, false));  // no directory
  EXPECT_EQ(reader_.malformed(), 1u);
  EXPECT_EQ(reader_.vanished(), 2u);
}

TEST_F(FixtureTest, ZombieHasNoPssUss) {
  std::optional<ProcessInfo> p = reader_.read_process(700, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->state, 'Z');
  EXPECT_EQ(p->rss_kb, 0u);  // statm
  EXPECT_FALSE(p->pss_kb);
  EXPECT_EQ(display_command(*p), "[defunct]");
}

TEST_F(FixtureTest, CommandLineControlCharacters) {
  std::optional<ProcessInfo> p = reader_.read_process(800, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->cmdline, "/bin/sleeper --note=two?lines");
  EXPECT_EQ(p->uid, 65534u);
}

TEST(ProcReader, PermissionDeniedOnSmapsRollupIsUnknown) {
  FaultyProcFiles files(fixture_root());
  files.errors["1/smaps_rollup"] = ReadStatus::kDenied;
  ProcReader reader(files, kPage);
  std::optional<ProcessInfo> p = reader.read_process(1, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rss_kb, 12000u);
  EXPECT_FALSE(p->pss_kb);
  EXPECT_FALSE(p->uss_kb);
}

TEST(ProcReader, PermissionDeniedOnStatusUsesStatm) {
  FaultyProcFiles files(fixture_root());
  files.errors["1/status"] = ReadStatus::kDenied;
  ProcReader reader(files, kPage);
  std::optional<ProcessInfo> p = reader.read_process(1, false);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->uid);
  EXPECT_EQ(p->rss_kb, 12000u);  // statm: 3000 pages
  EXPECT_EQ(p->swap_kb, 0u);     // smaps_rollup
}

TEST(ProcReader, PermissionDeniedOnStatSkipsTheProcess) {
  FaultyProcFiles files(fixture_root());
  files.errors["1/stat"] = ReadStatus::kDenied;
  ProcReader reader(files, kPage);
  EXPECT_FALSE(reader.read_process(1, false));
}

TEST(ProcReader, VanishingBetweenFilesSkipsTheProcess) {
  FaultyProcFiles files(fixture_root());
  files.errors["1/status"] = ReadStatus::kMissing;  // gone after stat was read
  files.errors["100/task"] = ReadStatus::kMissing;  // gone before its threads were listed
  ProcReader reader(files, kPage);
  EXPECT_FALSE(reader.read_process(1, false));
  EXPECT_TRUE(reader.read_process(100, false));
  EXPECT_FALSE(reader.read_process(100, true));
  EXPECT_EQ(reader.vanished(), 2u);
}

TEST(ProcReader, VanishedThreadIsSkipped) {
  FaultyProcFiles files(fixture_root());
  files.errors["100/task/101/stat"] = ReadStatus::kMissing;
  ProcReader reader(files, kPage);
  std::optional<ProcessInfo> p = reader.read_process(100, true);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->threads.size(), 2u);
  EXPECT_EQ(p->threads[0].tid, 100u);
  EXPECT_EQ(p->threads[1].tid, 102u);
}

TEST(ProcReader, EmptyAndMalformedFiles) {
  TempTree tree;
  tree.write("10/stat", "");  // a read racing with the exit
  tree.write("11/stat", stat_line(11, "x"));
  tree.write("11/status", "");
  tree.write("11/statm", "garbage\n");
  tree.write("11/smaps_rollup", "Pss: lots\n");
  tree.write("11/cmdline", "");
  tree.write("12/stat", stat_line(12, "y", 'S', 1, 0, 0, 0, 4));  // 4 threads, task/ garbage
  tree.write("12/status", "VmRSS:\t8 kB\n");
  tree.write("12/task/12/stat", stat_line(12, "y"));
  tree.write("12/task/13/stat", "13 (broken");
  tree.write("12/task/14/stat", "");
  ProcFiles files(tree.root());
  ProcReader reader(files, kPage);
  EXPECT_FALSE(reader.read_process(10, false));
  EXPECT_EQ(reader.vanished(), 1u);
  std::optional<ProcessInfo> p = reader.read_process(11, false);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->uid);
  EXPECT_FALSE(p->rss_kb);
  EXPECT_FALSE(p->pss_kb);
  EXPECT_FALSE(p->swap_kb);
  EXPECT_EQ(display_command(*p), "[x]");
  p = reader.read_process(12, true);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rss_kb, 8u);
  ASSERT_EQ(p->threads.size(), 1u);
  EXPECT_EQ(p->threads[0].tid, 12u);
}

TEST(ProcReader, ListPidsFailsWhenTheRootGoes) {
  auto tree = std::make_unique<TempTree>();
  ProcFiles files(tree->root());
  ProcReader reader(files, kPage);
  EXPECT_TRUE(reader.list_pids().empty());
  tree.reset();                             // the directory is removed while open
  EXPECT_TRUE(reader.list_pids().empty());  // an unlinked directory lists as empty
  FaultyProcFiles faulty(fixture_root());
  faulty.errors[""] = ReadStatus::kError;
  ProcReader broken(faulty, kPage);
  EXPECT_THROW(broken.list_pids(), Error);
}

}  // namespace
}  // namespace memtrack::top
