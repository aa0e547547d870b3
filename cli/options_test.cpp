// Tests for memtrack's command line (options.h, parse_command_line): each command's options
// and operands, "--", the checks between options, and the messages of usage errors (printed
// to stderr, exit status 125).
#include "cli/options.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace memtrack::cli {
namespace {

// Unsets LSAN_OPTIONS and ASAN_OPTIONS, which memtrack run reads, for one test and puts them
// back afterwards.
class CommandLine : public testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      if (const char* value = std::getenv(kNames[i])) saved_[i] = value;
      unsetenv(kNames[i]);
    }
  }
  void TearDown() override {
    for (int i = 0; i < 2; ++i) {
      if (saved_[i]) {
        setenv(kNames[i], saved_[i]->c_str(), 1);
      } else {
        unsetenv(kNames[i]);
      }
    }
  }

 private:
  static constexpr const char* kNames[] = {"LSAN_OPTIONS", "ASAN_OPTIONS"};
  std::optional<std::string> saved_[2];
};

struct Parsed {
  bool ok = false;
  int exit_code = -1;
  std::string out;  // what memtrack printed on stdout
  std::string err;  // and on stderr
  Config config;
};

// parse_command_line on "memtrack ARGS...".
Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "memtrack");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  Parsed parsed;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  parsed.ok = parse_command_line(static_cast<int>(args.size()), argv.data(), &parsed.config,
                                 &parsed.exit_code);
  parsed.err = testing::internal::GetCapturedStderr();
  parsed.out = testing::internal::GetCapturedStdout();
  return parsed;
}

// The one error line a usage error prints.
std::string usage_error(std::vector<std::string> args) {
  Parsed parsed = parse(std::move(args));
  EXPECT_FALSE(parsed.ok);
  EXPECT_EQ(parsed.exit_code, kExitToolFailed);
  return parsed.err;
}

using Strings = std::vector<std::string>;

TEST_F(CommandLine, RunTakesTheProgramAndLeavesItsArgumentsAlone) {
  Parsed parsed = parse({"run", "--log-file=out.txt", "./prog", "-q", "--log-file=theirs"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  EXPECT_EQ(parsed.config.command, kRun);
  EXPECT_EQ(parsed.config.program, (Strings{"./prog", "-q", "--log-file=theirs"}));
  EXPECT_EQ(parsed.config.log_file, "out.txt");
  EXPECT_FALSE(parsed.config.quiet);
  EXPECT_EQ(parsed.err, "");
}

TEST_F(CommandLine, RunDefaultsWithoutOptions) {
  Parsed parsed = parse({"run", "./prog"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  const Config& c = parsed.config;
  EXPECT_EQ(c.error_exitcode, 0);
  EXPECT_EQ(c.log_file, "");
  EXPECT_TRUE(c.text_report);
  EXPECT_EQ(c.leak_check, Config::LeakCheck::kFull);
  EXPECT_EQ(c.show_leak_kinds, report::kDefaultShownKinds);
  EXPECT_EQ(c.errors_for_leak_kinds,
            report::LeakKinds({report::LeakKind::kDefinite, report::LeakKind::kPossible,
                               report::LeakKind::kUnclassified}));
  EXPECT_TRUE(c.trace_children);
  EXPECT_TRUE(c.track_fds);
  EXPECT_TRUE(c.snapshots);
  EXPECT_TRUE(c.error_for_no_data);
  EXPECT_EQ(c.wait_children_ms, 1000);
  EXPECT_EQ(c.keep_results, "");
  EXPECT_TRUE(c.lsan_notes.empty());
  EXPECT_EQ(c.memtrack_argv, (Strings{"memtrack", "run", "./prog"}));
}

TEST_F(CommandLine, OptionValuesComeAfterAnEqualsSignOrAsTheNextArgument) {
  Parsed joined = parse({"run", "--error-exitcode=7", "--keep-results=dir", "./prog"});
  Parsed separate = parse({"run", "--error-exitcode", "7", "--keep-results", "dir", "./prog"});
  for (const Parsed& parsed : {joined, separate}) {
    ASSERT_TRUE(parsed.ok) << parsed.err;
    EXPECT_EQ(parsed.config.error_exitcode, 7);
    EXPECT_EQ(parsed.config.keep_results, "dir");
    EXPECT_EQ(parsed.config.program, Strings{"./prog"});
  }
}

TEST_F(CommandLine, TheLastOccurrenceWinsUnlessTheOptionRepeats) {
  Parsed parsed = parse({"run", "--log-file=a", "--suppressions", "one.supp", "--log-file", "b",
                         "--suppressions=two.supp", "./prog"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  EXPECT_EQ(parsed.config.log_file, "b");
  EXPECT_EQ(parsed.config.suppressions, (Strings{"one.supp", "two.supp"}));
}

TEST_F(CommandLine, DoubleDashEndsMemtracksOptionsOnlyBeforeTheProgram) {
  Parsed parsed = parse({"run", "-q", "--", "-dashed-prog", "--log-file=x"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  EXPECT_TRUE(parsed.config.quiet);
  EXPECT_EQ(parsed.config.log_file, "");
  EXPECT_EQ(parsed.config.program, (Strings{"-dashed-prog", "--log-file=x"}));
  // After the program, "--" is the program's own (memtrack run git log -- file).
  Parsed after = parse({"run", "git", "log", "--", "file", "--", "x"});
  ASSERT_TRUE(after.ok) << after.err;
  EXPECT_EQ(after.config.program, (Strings{"git", "log", "--", "file", "--", "x"}));
}

TEST_F(CommandLine, UnknownOptionsAreUsageErrorsNotTakenForTheProgram) {
  EXPECT_EQ(usage_error({"run", "--bogus", "./prog"}),
            "memtrack: error: unknown option '--bogus' (see memtrack run --help; put '--' "
            "before a program whose name starts with '-')\n");
  std::string err = usage_error({"report", "--bogus", "memtrack.1.mtr"});
  EXPECT_TRUE(err.starts_with("memtrack: error: ")) << err;
  EXPECT_NE(err.find("--bogus"), std::string::npos) << err;
  EXPECT_TRUE(err.ends_with(" (see memtrack --help)\n")) << err;
  // Another command's option.
  err = usage_error({"report", "--expire=5s", "memtrack.1.mtr"});
  EXPECT_NE(err.find("--expire"), std::string::npos) << err;
  err = usage_error({"top", "--log-file=x"});
  EXPECT_NE(err.find("--log-file"), std::string::npos) << err;
}

TEST_F(CommandLine, ABadValueNamesTheOption) {
  EXPECT_EQ(usage_error({"run", "--num-callers=0", "./prog"}),
            "memtrack: error: --num-callers expects a number from 1 to 256, not '0'\n");
  EXPECT_EQ(usage_error({"report", "--show-leak-kinds", "most", "x.mtr"}),
            "memtrack: error: --show-leak-kinds expects all, none or a comma-separated list of "
            "definite, indirect, possible, reachable, not 'most'\n");
}

TEST_F(CommandLine, RunWithoutAProgramIsAnError) {
  EXPECT_EQ(usage_error({"run", "-q"}),
            "memtrack: error: no program given (usage: memtrack run [OPTIONS] [--] PROG "
            "[ARGS...])\n");
}

TEST_F(CommandLine, AProgramWhereTheCommandBelongsIsPointedToRun) {
  EXPECT_EQ(usage_error({"./prog", "arg"}),
            "memtrack: error: unknown command './prog' (to run a program under memtrack: "
            "memtrack run [OPTIONS] [--] ./prog [ARGS...])\n");
}

TEST_F(CommandLine, BareMemtrackPrintsTheCommandsAndFails) {
  Parsed parsed = parse({});
  EXPECT_FALSE(parsed.ok);
  EXPECT_EQ(parsed.exit_code, kExitToolFailed);
  for (const char* command : {"run", "report", "top", "snapshot", "diff", "ui", "link-flags"}) {
    EXPECT_NE(parsed.err.find(command), std::string::npos) << command;
  }
}

TEST_F(CommandLine, VersionIsPrintedOnStdoutWithExitStatusZero) {
  Parsed parsed = parse({"--version"});
  EXPECT_FALSE(parsed.ok);
  EXPECT_EQ(parsed.exit_code, 0);
  EXPECT_EQ(parsed.out, "memtrack " MEMTRACK_VERSION "\n");
}

TEST_F(CommandLine, ValgrindOptionsWithoutMeaningAreDroppedWithAWarning) {
  Parsed parsed = parse({"run", "--tool=memcheck", "--track-origins=yes", "--leak-check=full",
                         "./prog", "--track-origins=yes"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  EXPECT_EQ(parsed.config.program, (Strings{"./prog", "--track-origins=yes"}));
  EXPECT_EQ(parsed.err,
            "memtrack: warning: --track-origins (valgrind) has no meaning here: memtrack does "
            "not track uninitialised values; ignored\n");
}

TEST_F(CommandLine, AValgrindToolOtherThanMemcheckIsRefused) {
  EXPECT_EQ(usage_error({"run", "--tool=helgrind", "./prog"}),
            "memtrack: error: --tool=helgrind (valgrind): memtrack does the work of valgrind's "
            "memcheck only\n");
}

TEST_F(CommandLine, LeakCheckSummaryOverridesTheLeakKindsWhateverTheOrder) {
  for (const Strings& args :
       {Strings{"run", "--leak-check=summary", "--show-leak-kinds=all", "./prog"},
        Strings{"run", "--show-leak-kinds=all", "--errors-for-leak-kinds=all",
                "--leak-check=summary", "./prog"}}) {
    Parsed parsed = parse(args);
    ASSERT_TRUE(parsed.ok) << parsed.err;
    EXPECT_EQ(parsed.config.leak_check, Config::LeakCheck::kSummary);
    EXPECT_EQ(parsed.config.show_leak_kinds, report::LeakKinds{});
    EXPECT_EQ(parsed.config.errors_for_leak_kinds, report::LeakKinds{});
  }
}

TEST_F(CommandLine, FormatPutsThatFormatOnStdoutInsteadOfTheText) {
  Parsed parsed = parse({"report", "--format=sarif", "memtrack.1.mtr"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  EXPECT_EQ(parsed.config.command, kReport);
  EXPECT_EQ(parsed.config.files, Strings{"memtrack.1.mtr"});
  EXPECT_EQ(parsed.config.sarif_file, "-");
  EXPECT_FALSE(parsed.config.text_report);
  EXPECT_TRUE(writes_a_format_to_stdout(parsed.config));

  Parsed text = parse({"report", "--format", "text", "memtrack.1.mtr"});
  ASSERT_TRUE(text.ok) << text.err;
  EXPECT_EQ(text.config.log_file, "-");
  EXPECT_TRUE(text.config.text_report);
  EXPECT_FALSE(writes_a_format_to_stdout(text.config));
}

TEST_F(CommandLine, AnUnknownFormatListsTheFormats) {
  EXPECT_EQ(usage_error({"snapshot", "--format=yaml", "1234"}),
            "memtrack: error: --format expects text, json, junit, collapsed, xml, sarif, pprof, "
            "speedscope or html, not 'yaml'\n");
}

TEST_F(CommandLine, OnlyOneReportMayWriteToStdout) {
  EXPECT_EQ(usage_error({"run", "--log-file=-", "--json=-", "./prog"}),
            "memtrack: error: --log-file=- and --json=- cannot both write to stdout\n");
  EXPECT_EQ(usage_error({"report", "--format=json", "--html=-", "x.mtr"}),
            "memtrack: error: only one of --log-file, --json, --junit, --collapsed, --xml-file, "
            "--sarif, --pprof, --speedscope, --html and --format can write to stdout\n");
}

TEST_F(CommandLine, XmlYesNeedsAFileAndXmlNoDropsIt) {
  EXPECT_EQ(usage_error({"run", "--xml=yes", "./prog"}),
            "memtrack: error: --xml=yes needs --xml-file=FILE or --xml-fd=N (where to write the "
            "XML)\n");
  Parsed parsed = parse({"run", "--xml-file=out.xml", "--xml=no", "./prog"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  EXPECT_EQ(parsed.config.xml_file, "");
}

TEST_F(CommandLine, LiveModeOptionsNeedExpire) {
  EXPECT_EQ(usage_error({"run", "--report-interval=1s", "./prog"}),
            "memtrack: error: --report-interval needs --expire (live mode is off without it)\n");
  EXPECT_EQ(usage_error({"run", "--live-json=live.jsonl", "./prog"}),
            "memtrack: error: --live-json needs --expire (live mode is off without it)\n");
  Parsed parsed = parse({"run", "--expire=5m", "--report-interval=30s", "./prog"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  EXPECT_EQ(parsed.config.expire_ms, 300000);
  EXPECT_EQ(parsed.config.report_interval_ms, 30000);
}

TEST_F(CommandLine, FailOnNeedsABaselineInRunButNotInDiff) {
  EXPECT_EQ(usage_error({"run", "--fail-on=new", "./prog"}),
            "memtrack: error: --fail-on needs --baseline (memtrack run compares with nothing "
            "without it)\n");
  Parsed parsed = parse({"diff", "--fail-on=grown", "base.json", "new.json"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  EXPECT_EQ(parsed.config.command, kDiff);
  EXPECT_EQ(parsed.config.fail_on, Config::FailOn::kGrown);
  EXPECT_EQ(parsed.config.baseline, "base.json");
  EXPECT_EQ(parsed.config.diff_new, "new.json");
}

TEST_F(CommandLine, TopTakesItsViewOptions) {
  Parsed parsed = parse({"top", "-d", "0.5", "--once", "--pid", "1,2", "--pid=3", "--sort", "pid",
                         "--limit=5", "--tree", "--proc-root", "/fake/proc"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  const TopConfig& top = parsed.config.top;
  EXPECT_EQ(parsed.config.command, kTop);
  EXPECT_DOUBLE_EQ(top.delay_seconds, 0.5);
  EXPECT_TRUE(top.once);
  EXPECT_FALSE(top.json);
  EXPECT_EQ(top.view.pids, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(top.view.sort, top::SortColumn::kPid);
  EXPECT_EQ(top.view.limit, 5u);
  EXPECT_TRUE(top.view.tree);
  EXPECT_EQ(top.proc_root, "/fake/proc");
  EXPECT_EQ(parsed.config.program, Strings{});
}

TEST_F(CommandLine, SnapshotTakesOnePid) {
  Parsed parsed = parse({"snapshot", "--timeout", "2.5", "1234"});
  ASSERT_TRUE(parsed.ok) << parsed.err;
  EXPECT_EQ(parsed.config.command, kSnapshot);
  EXPECT_EQ(parsed.config.snapshot_pid, 1234u);
  EXPECT_DOUBLE_EQ(parsed.config.snapshot_timeout_s, 2.5);
  EXPECT_EQ(usage_error({"snapshot", "0"}),
            "memtrack: error: PID expects a number from 1 to 1073741824, not '0'\n");
}

TEST_F(CommandLine, RunReadsLsanOptionsButTheCommandLineWins) {
  setenv("LSAN_OPTIONS", "exitcode=23:max_leaks=4:report_objects=1", 1);
  Parsed from_environment = parse({"run", "./prog"});
  ASSERT_TRUE(from_environment.ok) << from_environment.err;
  EXPECT_EQ(from_environment.config.error_exitcode, 23);
  EXPECT_EQ(from_environment.config.max_leaks, 4);
  EXPECT_EQ(from_environment.config.lsan_notes,
            Strings{"LSAN_OPTIONS: report_objects is ignored (memtrack groups leaks by "
                    "allocation stack and keeps no block addresses)"});

  Parsed overridden = parse({"run", "--error-exitcode=5", "./prog"});
  ASSERT_TRUE(overridden.ok) << overridden.err;
  EXPECT_EQ(overridden.config.error_exitcode, 5);

  Parsed report = parse({"report", "x.mtr"});
  ASSERT_TRUE(report.ok) << report.err;
  EXPECT_EQ(report.config.error_exitcode, 0);
  EXPECT_TRUE(report.config.lsan_notes.empty());
}

}  // namespace
}  // namespace memtrack::cli
