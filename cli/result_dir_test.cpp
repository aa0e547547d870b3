// Tests for the result directory (result_dir.h): temporary and kept directories, the result
// files and on-demand check reports found in them, the start markers of processes without a
// result, and the removal of temporary directories left by a memtrack that was killed.
#include "cli/result_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace memtrack::cli {
namespace {

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;
using namespace std::string_literals;

// A fresh directory for one test, with TMPDIR pointing into it; both undone afterwards.
class ResultDirTest : public testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/memtrack_result_dir_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    if (const char* tmpdir = std::getenv("TMPDIR")) saved_tmpdir_ = tmpdir;
    setenv("TMPDIR", root_.c_str(), 1);
  }
  void TearDown() override {
    if (saved_tmpdir_) {
      setenv("TMPDIR", saved_tmpdir_->c_str(), 1);
    } else {
      unsetenv("TMPDIR");
    }
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  static void write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  // The names of `dir`'s entries, sorted.
  static Strings names_in(const fs::path& dir) {
    Strings names;
    for (const auto& entry : fs::directory_iterator(dir)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // The pid of a process that has ended and been reaped.
  static pid_t ended_pid() {
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    int status = 0;
    waitpid(pid, &status, 0);
    return pid;
  }

  fs::path root_;

 private:
  std::optional<std::string> saved_tmpdir_;
};

TEST_F(ResultDirTest, ATemporaryDirectoryIsPrivateAndRemovedAfterwards) {
  std::string path;
  {
    ResultDir dir("");
    path = dir.path();
    EXPECT_TRUE(dir.temporary());
    EXPECT_EQ(fs::path(path).parent_path(), root_);
    EXPECT_TRUE(fs::path(path).filename().string().starts_with("memtrack."));
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    std::ifstream owner(path + "/owner");
    pid_t pid = 0;
    std::string started;
    EXPECT_TRUE(owner >> pid >> started);
    EXPECT_EQ(pid, getpid());
    write(path + "/memtrack.1.mtr", "result");
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(ResultDirTest, KeepLeavesATemporaryDirectoryWithoutItsOwnerFile) {
  std::string path;
  {
    ResultDir dir("");
    path = dir.path();
    write(path + "/memtrack.1.mtr", "result");
    dir.keep();
    EXPECT_FALSE(dir.temporary());
  }
  EXPECT_EQ(names_in(path), Strings{"memtrack.1.mtr"});
}

TEST_F(ResultDirTest, DirectoriesOfAKilledMemtrackAreRemovedAtTheNextStart) {
  std::string own_start_time;
  {
    ResultDir first("");
    std::ifstream owner(first.path() + "/owner");
    pid_t pid = 0;
    owner >> pid >> own_start_time;
    first.keep();
    fs::remove_all(first.path());
  }
  fs::create_directory(root_ / "memtrack.dead01");  // its memtrack has ended
  write(root_ / "memtrack.dead01/owner", std::to_string(ended_pid()) + " 12345\n");
  fs::create_directory(root_ / "memtrack.reuse1");  // its pid is another process's now
  write(root_ / "memtrack.reuse1/owner", std::to_string(getpid()) + " 1\n");
  fs::create_directory(root_ / "memtrack.alive1");  // its memtrack still runs
  write(root_ / "memtrack.alive1/owner", std::to_string(getpid()) + " " + own_start_time + "\n");
  fs::create_directory(root_ / "memtrack.kept01");  // kept: no owner file
  fs::create_directory(root_ / "memtrack.dead0");   // not a name memtrack makes
  write(root_ / "memtrack.dead0/owner", std::to_string(ended_pid()) + " 12345\n");

  ResultDir dir("");
  Strings names = names_in(root_);
  names.erase(std::remove(names.begin(), names.end(), fs::path(dir.path()).filename().string()),
              names.end());
  EXPECT_EQ(names, (Strings{"memtrack.alive1", "memtrack.dead0", "memtrack.kept01"}));
}

TEST_F(ResultDirTest, AKeptDirectoryIsCreatedAndKept) {
  fs::path keep = root_ / "results" / "run1";
  {
    ResultDir dir(keep.string());
    EXPECT_FALSE(dir.temporary());
    EXPECT_EQ(dir.path(), keep.string());
    EXPECT_TRUE(fs::is_directory(keep));
    EXPECT_EQ(fs::status(keep).permissions() & fs::perms::all, fs::perms::owner_all);
  }
  EXPECT_TRUE(fs::is_directory(keep));
}

TEST_F(ResultDirTest, AKeptDirectoryThatCannotBeCreatedIsAnError) {
  write(root_ / "file", "");
  std::string keep = (root_ / "file").string();
  try {
    ResultDir dir(keep);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("cannot create the --keep-results directory " +
                                                  keep + ": "))
        << e.what();
  }
}

TEST_F(ResultDirTest, AKeptDirectoryListsOnlyWhatThisRunWrote) {
  fs::path keep = root_ / "kept";
  fs::create_directory(keep);
  write(keep / "memtrack.5.mtr", "earlier");
  write(keep / "memtrack.5.started", "1\nearlier");
  ResultDir dir(keep.string());
  write(keep / "memtrack.30.mtr", "new");
  write(keep / "memtrack.200.mtr", "new");
  write(keep / "other.7.mtr", "not memtrack's");
  write(keep / "memtrack.8.started", "1\nprog");
  EXPECT_EQ(dir.new_result_files(),
            (Strings{(keep / "memtrack.200.mtr").string(), (keep / "memtrack.30.mtr").string()}));
  std::vector<StartedProcess> started = dir.started_without_result();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].pid, 8u);
  EXPECT_EQ(started[0].command, Strings{"prog"});
}

TEST_F(ResultDirTest, CheckReportsAreInTheOrderTheyWereMade) {
  ResultDir dir("");
  fs::path path = dir.path();
  for (const char* name : {"check.10.1.mtr", "check.9.10.mtr", "check.9.2.mtr", "check.9.1.mtr",
                           "check.9.x.mtr", "check.9.3.mtr.tmp", "memtrack.9.mtr"}) {
    write(path / name, "");
  }
  EXPECT_EQ(dir.check_files(),
            (Strings{(path / "check.9.1.mtr").string(), (path / "check.9.2.mtr").string(),
                     (path / "check.9.10.mtr").string(), (path / "check.10.1.mtr").string()}));
}

TEST_F(ResultDirTest, StartMarkersWithoutAResultListTheProcessesByPid) {
  using Origin = StartedProcess::Origin;
  fs::path dir = root_;
  write(dir / "memtrack.100.started", "7 forked\n./server\0--port\08080"s);
  write(dir / "memtrack.50.started", "1\n/bin/sh\0-c\0true"s);
  write(dir / "memtrack.80.started", "50 spawned\nls");
  write(dir / "memtrack.90.started", "50 exec\n/usr/bin/sudo");
  write(dir / "memtrack.60.started", "1\nanswered");
  write(dir / "memtrack.60.mtr", "result");
  write(dir / "memtrack.70.started", "1");  // incomplete: no newline yet
  std::vector<StartedProcess> started = started_without_result(dir.string());
  ASSERT_EQ(started.size(), 4u);
  EXPECT_EQ(started[0].pid, 50u);
  EXPECT_EQ(started[0].ppid, 1u);
  EXPECT_EQ(started[0].origin, Origin::kImage);
  EXPECT_EQ(started[0].command, (Strings{"/bin/sh", "-c", "true"}));
  EXPECT_EQ(started[1].pid, 80u);
  EXPECT_EQ(started[1].origin, Origin::kSpawned);
  EXPECT_EQ(started[1].command, Strings{"ls"});
  EXPECT_EQ(started[2].pid, 90u);
  EXPECT_EQ(started[2].origin, Origin::kExec);
  EXPECT_EQ(started[3].pid, 100u);
  EXPECT_EQ(started[3].ppid, 7u);
  EXPECT_EQ(started[3].origin, Origin::kForked);
  EXPECT_EQ(started[3].command, (Strings{"./server", "--port", "8080"}));

  std::vector<StartedProcess> skipped =
      started_without_result(dir.string(), {(dir / "memtrack.50.started").string()});
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_EQ(skipped[0].pid, 80u);
}

TEST_F(ResultDirTest, AnsweredMarkersAndSettingsOfEndedProcessesAreRemoved) {
  fs::path keep = root_ / "kept";
  ResultDir dir(keep.string());
  std::string ended = std::to_string(ended_pid());
  std::string alive = std::to_string(getpid());
  write(keep / "memtrack.10.started", "1\nanswered");
  write(keep / "memtrack.10.mtr", "result");
  write(keep / "memtrack.11.started", "1\nno result");
  write(keep / ("memtrack." + ended + ".settings"), "");
  write(keep / ("memtrack." + alive + ".settings"), "");
  dir.remove_answered_markers();
  // Sorted as names_in sorts them: where the live pid's file falls depends on its digits.
  Strings expected{"memtrack.10.mtr", "memtrack.11.started", "memtrack." + alive + ".settings"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names_in(keep), expected);
}

}  // namespace
}  // namespace memtrack::cli
