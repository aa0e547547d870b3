// Tests for LeakSanitizer's options on the CLI's side (lsan_environment.h): LSAN_OPTIONS and
// ASAN_OPTIONS for memtrack run, and what a program's __lsan_default_options() and
// __lsan_default_suppressions() add to its report's suppressions.
#include "cli/lsan_environment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace memtrack::cli {
namespace {

using Strings = std::vector<std::string>;

TEST(LsanEnvironment, ReportOptionsSetTheConfig) {
  Config config;
  Strings notes =
      apply_lsan_options("suppressions=/src/lsan.supp:exitcode=23,print_suppressions=1 max_leaks=5",
                         "LSAN_OPTIONS", config);
  EXPECT_EQ(notes, Strings{});
  EXPECT_EQ(config.suppressions, Strings{"/src/lsan.supp"});
  EXPECT_EQ(config.error_exitcode, 23);
  EXPECT_TRUE(config.used_suppressions);
  EXPECT_EQ(config.max_leaks, 5);
  // log_path: LeakSanitizer writes PATH.PID; stdout and stderr name those streams.
  apply_lsan_options("log_path=/tmp/lsan", "LSAN_OPTIONS", config);
  EXPECT_EQ(config.log_file, "/tmp/lsan.%p");
  apply_lsan_options("log_path=stdout", "LSAN_OPTIONS", config);
  EXPECT_EQ(config.log_file, "-");
  apply_lsan_options("log_path=stderr", "LSAN_OPTIONS", config);
  EXPECT_EQ(config.log_file, "");
}

TEST(LsanEnvironment, OptionsWithoutEffectGetANoteWithTheReason) {
  Config config;
  Strings notes = apply_lsan_options("report_objects=1:no_such_option=2", "LSAN_OPTIONS", config);
  EXPECT_EQ(notes, (Strings{"LSAN_OPTIONS: report_objects is ignored (memtrack groups leaks by "
                            "allocation stack and keeps no block addresses)",
                            "LSAN_OPTIONS: no_such_option is ignored (memtrack has no "
                            "equivalent)"}));
}

TEST(LsanEnvironment, BadValuesAreNotesAndLeaveTheConfigAlone) {
  Config config;
  config.error_exitcode = 9;
  Strings notes = apply_lsan_options("exitcode=300:print_suppressions=maybe:max_leaks=-1",
                                     "LSAN_OPTIONS", config);
  EXPECT_EQ(notes, (Strings{"LSAN_OPTIONS: exitcode is ignored (LSAN_OPTIONS exitcode expects a "
                            "number from 0 to 255, not '300')",
                            "LSAN_OPTIONS: print_suppressions is ignored (expected 1/0, "
                            "true/false or yes/no, not 'maybe')",
                            "LSAN_OPTIONS: max_leaks is ignored (LSAN_OPTIONS max_leaks expects "
                            "a number from 0 to 1073741824, not '-1')"}));
  EXPECT_EQ(config.error_exitcode, 9);
  EXPECT_FALSE(config.used_suppressions);
  EXPECT_EQ(config.max_leaks, 0);
}

TEST(LsanEnvironment, ScanOptionsAreLeftToTheRuntimeWithoutANote) {
  Config config;
  Strings notes = apply_lsan_options(
      "use_stacks=0:use_globals=0:malloc_context_size=5:suppressions=", "LSAN_OPTIONS", config);
  EXPECT_EQ(notes, Strings{});
  EXPECT_EQ(config.num_callers, 0);
  EXPECT_EQ(config.suppressions, Strings{});
}

// Sets LSAN_OPTIONS and ASAN_OPTIONS (nullopt: unset) for one test and puts them back.
class SanitizerEnvironment {
 public:
  SanitizerEnvironment(std::optional<std::string> lsan, std::optional<std::string> asan) {
    set(0, lsan);
    set(1, asan);
  }
  ~SanitizerEnvironment() {
    for (int i = 0; i < 2; ++i) put(kNames[i], saved_[i]);
  }
  SanitizerEnvironment(const SanitizerEnvironment&) = delete;
  SanitizerEnvironment& operator=(const SanitizerEnvironment&) = delete;

 private:
  static constexpr const char* kNames[] = {"LSAN_OPTIONS", "ASAN_OPTIONS"};
  void set(int i, const std::optional<std::string>& value) {
    if (const char* old = std::getenv(kNames[i])) saved_[i] = old;
    put(kNames[i], value);
  }
  static void put(const char* name, const std::optional<std::string>& value) {
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  std::optional<std::string> saved_[2];
};

TEST(LsanEnvironment, TheEnvironmentsLsanOptionsApply) {
  {
    SanitizerEnvironment unset(std::nullopt, std::nullopt);
    Config config;
    EXPECT_EQ(apply_lsan_environment(config), Strings{});
  }
  SanitizerEnvironment environment("exitcode=3:verbosity=1", std::nullopt);
  Config config;
  EXPECT_EQ(apply_lsan_environment(config),
            Strings{"LSAN_OPTIONS: verbosity is ignored (use memtrack run -v)"});
  EXPECT_EQ(config.error_exitcode, 3);
}

TEST(LsanEnvironment, AsanDetectLeaksOffGetsANoteAndChangesNothing) {
  SanitizerEnvironment environment(std::nullopt, "halt_on_error=0:detect_leaks=0");
  Config config;
  EXPECT_EQ(apply_lsan_environment(config),
            Strings{"ASAN_OPTIONS sets detect_leaks=0, which memtrack ignores: it checks for "
                    "leaks anyway"});
  SanitizerEnvironment leaks_on(std::nullopt, "detect_leaks=0:detect_leaks=1");
  EXPECT_EQ(apply_lsan_environment(config), Strings{});
}

TEST(LsanEnvironment, ProgramDefaultSuppressionsComeAfterTheCommandLines) {
  report::ResultFile file;
  file.lsan_default_suppressions = "leak:from_program\n";
  report::Suppressions given = report::Suppressions::parse("leak:from_cli\n", "cli.supp");
  Strings notes;
  report::Suppressions all = with_program_lsan_defaults(file, given, &notes);
  EXPECT_EQ(notes, Strings{});
  EXPECT_EQ(all.patterns(), (Strings{"from_cli", "from_program"}));
  EXPECT_EQ(all.entry_origin(1), "__lsan_default_suppressions:1");
}

TEST(LsanEnvironment, ProgramDefaultOptionsMayNameASuppressionsFile) {
  char dir[] = "/tmp/memtrack_lsan_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/program.supp";
  std::ofstream(path) << "leak:from_file\n";
  report::ResultFile file;
  file.lsan_default_options = "use_stacks=0:suppressions=" + path;
  Strings notes;
  report::Suppressions all = with_program_lsan_defaults(file, report::Suppressions{}, &notes);
  EXPECT_EQ(notes, Strings{});
  EXPECT_EQ(all.patterns(), Strings{"from_file"});
  unlink(path.c_str());
  rmdir(dir);
}

TEST(LsanEnvironment, ProgramDefaultOptionsForTheReportAreNotesNotFailures) {
  report::ResultFile file;
  file.lsan_default_options = "exitcode=3:report_objects=1:suppressions=/nonexistent/memtrack.supp";
  Strings notes;
  report::Suppressions all = with_program_lsan_defaults(file, report::Suppressions{}, &notes);
  EXPECT_EQ(all.size(), 0u);
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0],
            "__lsan_default_options: exitcode is ignored (give it in LSAN_OPTIONS or on "
            "memtrack's command line)");
  EXPECT_EQ(notes[1],
            "__lsan_default_options: report_objects is ignored (memtrack groups leaks by "
            "allocation stack and keeps no block addresses)");
  EXPECT_TRUE(
      notes[2].starts_with("__lsan_default_options: suppressions is ignored (cannot "
                           "read suppressions file /nonexistent/memtrack.supp: "))
      << notes[2];
}

TEST(LsanEnvironment, MalformedProgramSuppressionsAreANote) {
  report::ResultFile file;
  file.lsan_default_suppressions = "leak:ok\nnot a suppression\n";
  report::Suppressions given = report::Suppressions::parse("leak:from_cli\n", "cli.supp");
  Strings notes;
  report::Suppressions all = with_program_lsan_defaults(file, given, &notes);
  EXPECT_EQ(all.patterns(), Strings{"from_cli"});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(notes[0].starts_with(
      "__lsan_default_suppressions are ignored: __lsan_default_suppressions:2: "))
      << notes[0];
}

}  // namespace
}  // namespace memtrack::cli
