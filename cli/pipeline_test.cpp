// Tests for the steps between the result files and the exit status that work alone: the exit
// status policy (pipeline.h), which leak kinds need stacks, and the reports of processes
// without leak data (no_data.h).
#include "cli/pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cli/no_data.h"

namespace memtrack::cli {
namespace {

using report::LeakKind;
using report::LeakKinds;
using report::ProcessReport;

ProcessReport process_with_leak(LeakKind kind) {
  ProcessReport p;
  report::LeakGroup group;
  group.kind = kind;
  group.bytes = 100;
  group.blocks = 1;
  p.leaks.push_back(group);
  return p;
}

report::Report report_of(ProcessReport p) {
  report::Report r;
  r.processes.push_back(std::move(p));
  return r;
}

Config failing_config() {
  Config config;
  config.error_exitcode = 99;
  return config;
}

TEST(ExitStatusTest, WithoutErrorExitcodeTheProgramsStatusStands) {
  Config config;  // error_exitcode 0: off
  EXPECT_EQ(exit_status(report_of(process_with_leak(LeakKind::kDefinite)), config, 3), 3);
}

TEST(ExitStatusTest, LeaksOfTheFailingKindsOnly) {
  Config config = failing_config();
  EXPECT_EQ(exit_status(report_of(process_with_leak(LeakKind::kDefinite)), config, 0), 99);
  EXPECT_EQ(exit_status(report_of(process_with_leak(LeakKind::kReachable)), config, 0), 0);
  EXPECT_EQ(exit_status(report_of(process_with_leak(LeakKind::kUnclassified)), config, 5), 99);
  config.errors_for_leak_kinds = LeakKinds{LeakKind::kReachable};
  EXPECT_EQ(exit_status(report_of(process_with_leak(LeakKind::kReachable)), config, 0), 99);
  EXPECT_EQ(exit_status(report_of(process_with_leak(LeakKind::kDefinite)), config, 4), 4);
  EXPECT_EQ(exit_status(report_of(ProcessReport{}), failing_config(), 7), 7);
}

TEST(ExitStatusTest, MisuseErrorsAlwaysFail) {
  ProcessReport p;
  p.errors.emplace_back();
  EXPECT_EQ(exit_status(report_of(p), failing_config(), 0), 99);
}

TEST(ExitStatusTest, OpenDescriptorsFailOnlyWhenAsked) {
  ProcessReport p;
  p.resource_sites.emplace_back();
  Config config = failing_config();
  EXPECT_EQ(exit_status(report_of(p), config, 0), 0);
  config.error_for_fds = true;
  EXPECT_EQ(exit_status(report_of(p), config, 0), 99);
}

TEST(ExitStatusTest, AProcessWithoutLeakDataFailsUnlessExpectedOrAllowed) {
  ProcessReport killed;
  killed.has_leak_data = false;
  Config config = failing_config();
  EXPECT_EQ(exit_status(report_of(killed), config, 0), 99);
  ProcessReport forked = killed;
  forked.no_data_expected = true;
  EXPECT_EQ(exit_status(report_of(forked), config, 0), 0);
  config.error_for_no_data = false;
  EXPECT_EQ(exit_status(report_of(killed), config, 0), 0);
}

TEST(ExitStatusTest, AnyProcessOfTheRunCounts) {
  report::Report r = report_of(ProcessReport{});
  r.processes.push_back(process_with_leak(LeakKind::kPossible));
  EXPECT_EQ(exit_status(r, failing_config(), 0), 99);
}

TEST(StackKindsTest, TheShownAndFailingKindsUnlessAnOutputNeedsEveryGroup) {
  Config config;
  EXPECT_EQ(stack_kinds_to_symbolize(config), report::kDefaultShownKinds);
  config.errors_for_leak_kinds = LeakKinds{LeakKind::kReachable};
  EXPECT_EQ(stack_kinds_to_symbolize(config),
            report::kDefaultShownKinds.with(LeakKind::kReachable));
  for (std::string Config::*output :
       {&Config::json_file, &Config::html_file, &Config::xml_file, &Config::baseline}) {
    Config needs_all;
    needs_all.*output = "out";
    EXPECT_EQ(stack_kinds_to_symbolize(needs_all), LeakKinds::all());
  }
  Config suppressions;
  suppressions.gen_suppressions = report::GenSuppressions::kBlock;
  EXPECT_EQ(stack_kinds_to_symbolize(suppressions), LeakKinds::all());
}

StartedProcess started(uint32_t pid, StartedProcess::Origin origin) {
  StartedProcess p;
  p.pid = pid;
  p.ppid = 1000;
  p.origin = origin;
  p.command = {"/bin/true"};
  return p;
}

TEST(NoDataTest, EachProcessWithoutAResultFileGetsItsReason) {
  using Origin = StartedProcess::Origin;
  report::Report r = report_of(ProcessReport{});
  r.processes[0].pid = 1000;
  NoDataFacts facts;
  report::ExitInfo signal;
  signal.how = report::ExitInfo::How::kSignal;
  signal.signal = 9;
  facts.reaped[2003] = signal;
  add_processes_without_data(
      r,
      {started(1000, Origin::kImage), started(2001, Origin::kImage), started(2002, Origin::kForked),
       started(2003, Origin::kImage), started(999, Origin::kImage)},
      facts, 999);
  ASSERT_EQ(r.processes.size(), 4u);  // 1000 had its report, 999 is the main process
  std::vector<std::string> reasons;
  for (const ProcessReport& p : r.processes) reasons.push_back(p.no_data_reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{"", "no_result_file", "forked_copy", "killed"}));
  EXPECT_TRUE(r.processes[2].no_data_expected);
  EXPECT_FALSE(r.processes[3].has_leak_data);
  EXPECT_EQ(r.processes[3].notes.at(0),
            "no leak data: killed by signal 9 before memtrack could write its report");
}

TEST(NoDataTest, TheReasonFollowsWhatMemtrackKnows) {
  NoDataFacts facts;
  facts.trace_children = false;
  report::Report r;
  add_processes_without_data(r, {started(2001, StartedProcess::Origin::kImage)}, facts, 1);
  EXPECT_EQ(r.processes.at(0).no_data_reason, "exec_not_followed");
  facts.exit_report_disabled = true;
  r = {};
  add_processes_without_data(r, {started(2001, StartedProcess::Origin::kImage)}, facts, 1);
  EXPECT_EQ(r.processes.at(0).no_data_reason, "report_at_exit_off");
}

TEST(NoDataTest, TheMainProcessWithoutItsReport) {
  MainProcess main;
  main.pid = 42;
  main.command = {"./prog"};
  main.exit.how = report::ExitInfo::How::kSignal;
  main.exit.signal = 9;
  ProcessReport killed = missing_main_report(main);
  EXPECT_EQ(killed.pid, 42u);
  EXPECT_EQ(killed.ppid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(killed.no_data_reason, "killed");
  main.exit = {};
  main.facts.untrackable = "./prog is statically linked";
  ProcessReport untrackable = missing_main_report(main);
  EXPECT_EQ(untrackable.no_data_reason, "not_trackable");
  EXPECT_EQ(untrackable.notes.at(0), "no leak data: ./prog is statically linked");
  main.facts.untrackable.clear();
  EXPECT_EQ(missing_main_report(main).no_data_reason, "no_result_file");
}

}  // namespace
}  // namespace memtrack::cli
