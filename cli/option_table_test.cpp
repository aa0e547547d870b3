// Tests for the option table (option_table.h): what each row does to a Config, the help the
// runtime-flag rows take from core/flags.inc, and the MEMTRACK_OPTIONS string memtrack run
// passes to the runtime (runtime_flag_options, quoted_option_value in options.h).
#include "cli/option_table.h"

#include <gtest/gtest.h>

#include <string>

namespace memtrack::cli {
namespace {

// The row that `command` has for `name` ("--color", or "-q" for "-q,--quiet").
const OptionSpec& row(const std::string& name, Command command = kRun) {
  for (const OptionSpec& spec : option_table()) {
    std::string names = std::string(",") + spec.name + ",";
    if ((spec.commands & command) != 0 && names.find("," + name + ",") != std::string::npos) {
      return spec;
    }
  }
  throw std::logic_error("no row for " + name);
}

// `config` after `name`'s row applied `value`.
Config applied(const std::string& name, const std::string& value, Command command = kRun,
               Config config = {}) {
  row(name, command).apply(config, value);
  return config;
}

// The message of the Error applying `value` throws, or "no error".
std::string error_applying(const std::string& name, const std::string& value,
                           Command command = kRun) {
  try {
    applied(name, value, command);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(OptionTable, RuntimeFlagHelpIsTheFlagsFirstSentenceAndItsDefault) {
  EXPECT_EQ(row("--num-callers").help,
            "Stack frames recorded per allocation (1-256). Default: 32.");
  EXPECT_EQ(row("--halt-on-error").help,
            "Write the report and abort the program at its first allocator misuse error "
            "instead of letting it go on. Default: no.");
  // memtrack run's own default, where it is not the runtime's.
  const std::string& snapshots = row("--snapshots").help;
  EXPECT_TRUE(snapshots.ends_with(" Default: yes.")) << snapshots;
  const std::string& trace_log = row("--trace-log").help;
  EXPECT_TRUE(
      trace_log.ends_with("%p expands to the pid. memtrack run empties the file first "
                          "unless its name has %p. Default: none."))
      << trace_log;
}

TEST(OptionTable, GenSuppressionsTakesValgrindsSpellingsAndLsan) {
  using report::GenSuppressions;
  EXPECT_EQ(applied("--gen-suppressions", "yes").gen_suppressions, GenSuppressions::kBlock);
  EXPECT_EQ(applied("--gen-suppressions", "all").gen_suppressions, GenSuppressions::kBlock);
  EXPECT_EQ(applied("--gen-suppressions", "lsan").gen_suppressions, GenSuppressions::kLsan);
  Config block;
  block.gen_suppressions = GenSuppressions::kBlock;
  EXPECT_EQ(applied("--gen-suppressions", "no", kRun, block).gen_suppressions,
            GenSuppressions::kNo);
  EXPECT_EQ(error_applying("--gen-suppressions", "some"),
            "--gen-suppressions expects no, yes or lsan, not 'some'");
}

TEST(OptionTable, ChoiceOptionsListTheirChoicesWhenWrong) {
  EXPECT_EQ(error_applying("--color", "yes"), "--color expects auto, always or never, not 'yes'");
  EXPECT_EQ(error_applying("--leak-check", "all"),
            "--leak-check expects no, summary, full or yes, not 'all'");
  EXPECT_EQ(error_applying("--fail-on", "shrunk", kDiff),
            "--fail-on expects never, new or grown, not 'shrunk'");
  EXPECT_EQ(error_applying("--collapsed-kind", "freed", kReport),
            "--collapsed-kind expects allocated, allocations, temporary, peak, leaked or "
            "window, not 'freed'");
  EXPECT_EQ(applied("--collapsed-kind", "peak", kReport).collapsed_kind, "peak");
  EXPECT_EQ(applied("--leak-check", "yes").leak_check, Config::LeakCheck::kFull);
  EXPECT_EQ(applied("--leak-check", "summary").leak_check, Config::LeakCheck::kSummary);
  EXPECT_EQ(applied("--color", "never").color, Config::Color::kNever);
}

TEST(OptionTable, ShowReachableIsValgrindsSpellingOfShowLeakKinds) {
  EXPECT_EQ(applied("--show-reachable", "yes").show_leak_kinds, report::LeakKinds::all());
  Config all;
  all.show_leak_kinds = report::LeakKinds::all();
  EXPECT_EQ(applied("--show-reachable", "no", kRun, all).show_leak_kinds,
            report::kDefaultShownKinds);
}

TEST(OptionTable, ZeroMeansNoWaitAndTheStartWhereDurationsAllowIt) {
  EXPECT_EQ(applied("--wait-children", "0").wait_children_ms, 0);
  EXPECT_EQ(applied("--wait-children", "2s").wait_children_ms, 2000);
  EXPECT_EQ(applied("--from", "0", kReport).from_ms, 0);
  EXPECT_EQ(applied("--from", "1m", kReport).from_ms, 60000);
  EXPECT_EQ(applied("--to", "0", kReport).to_ms, 0);
  EXPECT_EQ(error_applying("--expire", "0"),
            "--expire expects a duration from 10ms to 24 days such as 500ms, 30s, 5m or 1h, "
            "not '0'");
}

TEST(OptionTable, EmptyFileNamesAreRefusedForTraceLogAndProfile) {
  EXPECT_EQ(error_applying("--trace-log", ""), "--trace-log expects a file name");
  EXPECT_EQ(error_applying("--profile", ""), "--profile expects a file name");
}

TEST(RuntimeFlagOptions, RunsDefaultsAskOnlyForSnapshots) {
  EXPECT_EQ(runtime_flag_options(Config{}), "snapshot_signal=1");
}

TEST(RuntimeFlagOptions, EveryRuntimeOptionBecomesItsFlagInTableOrder) {
  Config config;
  config.num_callers = 64;
  config.trace_children = false;
  config.child_silent_after_fork = true;
  config.snapshots = false;
  config.halt_on_error = true;
  config.track_fds = false;
  config.trace_log = "/tmp/a b:c.%p";
  config.expire_ms = 5000;
  config.report_interval_ms = 1000;
  EXPECT_EQ(runtime_flag_options(config),
            "max_frames=64:follow_exec=0:silent_after_fork=1:halt_on_error=1:track_fds=0:"
            "trace_log=\"/tmp/a b:c.%p\":expire_ms=5000:report_interval_ms=1000");
}

TEST(RuntimeFlagOptions, FewerCallersStillRecordTheRuntimesDefaultDepth) {
  Config config;
  config.num_callers = 8;
  EXPECT_EQ(runtime_flag_options(config), "max_frames=32:snapshot_signal=1");
}

TEST(RuntimeFlagOptions, ReportIntervalIsPassedOnlyInLiveMode) {
  Config config;
  config.report_interval_ms = 1000;
  EXPECT_EQ(runtime_flag_options(config), "snapshot_signal=1");
  config.expire_ms = 60000;
  EXPECT_EQ(runtime_flag_options(config),
            "snapshot_signal=1:expire_ms=60000:report_interval_ms=1000");
}

TEST(RuntimeFlagOptions, PathsAreQuotedAndMayNotHoldADoubleQuote) {
  EXPECT_EQ(quoted_option_value("/tmp/x y:z"), "\"/tmp/x y:z\"");
  EXPECT_EQ(quoted_option_value(""), "\"\"");
  try {
    quoted_option_value("/tmp/a\"b");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "paths containing '\"' are not supported: /tmp/a\"b");
  }
  Config config;
  config.trace_log = "/tmp/\"quoted\"";
  EXPECT_THROW(runtime_flag_options(config), Error);
}

}  // namespace
}  // namespace memtrack::cli
