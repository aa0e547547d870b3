// Tests for valgrind command lines under memtrack (valgrind_options.h): the valgrind options
// memtrack ignores with a warning, and memtrack-valgrind's translation into `memtrack run`.
#include "cli/valgrind_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"

namespace memtrack::cli {
namespace {

using Strings = std::vector<std::string>;

TEST(ValgrindOptions, AnIgnoredOptionsWarningNamesItAndSaysWhy) {
  EXPECT_EQ(try_valgrind_ignored_option("--track-origins=yes"),
            "--track-origins (valgrind) has no meaning here: memtrack does not track "
            "uninitialised values; ignored");
  EXPECT_EQ(try_valgrind_ignored_option("--run-libc-freeres=no"),
            "--run-libc-freeres (valgrind) has no meaning here: memtrack leaves glibc's "
            "shutdown to the program; ignored");
  EXPECT_EQ(try_valgrind_ignored_option("--stats"),
            "--stats (valgrind) has no meaning here: memtrack's report has one format; ignored");
  // Patterns ending in '*' cover a family of options.
  EXPECT_EQ(try_valgrind_ignored_option("--vex-iropt-level=1"),
            "--vex-iropt-level (valgrind) has no meaning here: memtrack runs the program "
            "natively, not on a synthetic CPU; ignored");
  EXPECT_EQ(try_valgrind_ignored_option("--vgdb-error=0"),
            "--vgdb-error (valgrind) has no meaning here: memtrack has no gdb server; ignored");
  EXPECT_NE(try_valgrind_ignored_option("--vgdb=no"), std::nullopt);
  EXPECT_NE(try_valgrind_ignored_option("--trace-children-skip=*/sh"), std::nullopt);
  EXPECT_NE(try_valgrind_ignored_option("--xtree-memory-file=x.kcg"), std::nullopt);
}

TEST(ValgrindOptions, MemtracksOwnAndUnknownArgumentsAreNotIgnored) {
  for (const char* arg :
       {"--trace-children=yes", "--leak-check=full", "--num-callers=30", "--show-leak-kinds=all",
        "--log-file=x", "--suppressions=a.supp", "--error-exitcode=1", "--xml=yes", "--vex",
        "--track-origin=yes", "-q", "--", "-", "./prog", "track-origins=yes", ""}) {
    EXPECT_EQ(try_valgrind_ignored_option(arg), std::nullopt) << arg;
  }
}

TEST(ValgrindOptions, ToolMemcheckIsAcceptedSilentlyAndAnyOtherToolRefused) {
  EXPECT_EQ(try_valgrind_ignored_option("--tool=memcheck"), "");
  try {
    try_valgrind_ignored_option("--tool=massif");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--tool=massif (valgrind): memtrack does the work of valgrind's memcheck only");
  }
  EXPECT_THROW(try_valgrind_ignored_option("--tool"), Error);
}

bool takes_value(const std::string& name) {
  return name == "--log-file" || name == "--suppressions";
}

TEST(ValgrindOptions, DropRemovesIgnoredOptionsBeforeTheProgramOnly) {
  Strings args = {
      "--track-origins=yes", "--log-file",     "out.txt", "--tool=memcheck", "-q",
      "--demangle=no",       "--suppressions", "--stats", "./prog",          "--stats=yes",
      "--track-origins=yes"};
  testing::internal::CaptureStderr();
  drop_valgrind_ignored_options(args, takes_value);
  std::string err = testing::internal::GetCapturedStderr();
  // --stats after --suppressions is that option's value, not an option of its own.
  EXPECT_EQ(args, (Strings{"--log-file", "out.txt", "-q", "--suppressions", "--stats", "./prog",
                           "--stats=yes", "--track-origins=yes"}));
  EXPECT_EQ(err,
            "memtrack: warning: --track-origins (valgrind) has no meaning here: memtrack does "
            "not track uninitialised values; ignored\n"
            "memtrack: warning: --demangle (valgrind) has no meaning here: memtrack reads debug "
            "info after the program ends (inlined frames and demangled names always); "
            "ignored\n");
}

// argv for valgrind_command_line: `args`' strings, which must outlive the result.
std::vector<char*> argv_of(Strings& args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return argv;
}

TEST(ValgrindCommandLine, MemtrackValgrindRunsItsArgumentsAsMemtrackRun) {
  Strings args = {"/usr/bin/memtrack-valgrind", "--leak-check=full", "./prog", "arg"};
  std::vector<char*> argv = argv_of(args);
  std::vector<char*> run = valgrind_command_line(4, argv.data());
  ASSERT_EQ(run.size(), 6u);
  EXPECT_EQ(run[0], argv[0]);
  EXPECT_STREQ(run[1], "run");
  EXPECT_EQ(run[2], argv[1]);
  EXPECT_EQ(run[3], argv[2]);
  EXPECT_EQ(run[4], argv[3]);
  EXPECT_EQ(run[5], nullptr);
}

TEST(ValgrindCommandLine, TheNameNeedOnlyStartWithMemtrackValgrind) {
  Strings args = {"memtrack-valgrind-3.22"};
  std::vector<char*> argv = argv_of(args);
  std::vector<char*> run = valgrind_command_line(1, argv.data());
  ASSERT_EQ(run.size(), 3u);
  EXPECT_STREQ(run[1], "run");
  EXPECT_EQ(run[2], nullptr);
}

TEST(ValgrindCommandLine, OtherNamesAreLeftAlone) {
  for (const char* name : {"memtrack", "/usr/bin/memtrack", "valgrind",
                           "/opt/memtrack-valgrind/bin/memtrack", "my-memtrack-valgrind"}) {
    Strings args = {name, "run", "./prog"};
    std::vector<char*> argv = argv_of(args);
    EXPECT_TRUE(valgrind_command_line(3, argv.data()).empty()) << name;
  }
  EXPECT_TRUE(valgrind_command_line(0, nullptr).empty());
}

}  // namespace
}  // namespace memtrack::cli
