// Tests of the collapsed-stacks report (report/collapsed_renderer.h).
#include "report/collapsed_renderer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

std::string collapsed(const Report& report, CollapsedOptions options = {}) {
  std::ostringstream out;
  render_collapsed(report, out, options);
  return out.str();
}

TEST(CollapsedRenderer, RootFirstAndTotalsEqualLeakedBytes) {
  Report report = testing::sample_report();
  ProcessReport& p = report.processes[0];
  std::istringstream lines(collapsed(report));
  std::string line;
  uint64_t total = 0;
  size_t count = 0;
  while (std::getline(lines, line)) {
    size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    total += std::stoull(line.substr(space + 1));
    EXPECT_EQ(line.rfind("prog;", 0), 0u) << line;
    ++count;
  }
  uint64_t shown = 0;
  size_t groups = 0;
  for (const LeakGroup& g : p.leaks) {
    if (!kDefaultShownKinds.contains(g.kind)) continue;
    shown += g.bytes;
    ++groups;
  }
  EXPECT_EQ(total, shown);
  EXPECT_EQ(count, groups);
  EXPECT_NE(collapsed(report).find("prog;main;inline_helper;read_config 4096\n"), std::string::npos)
      << collapsed(report);
}

TEST(CollapsedRenderer, SameStackSummedAndNamesSanitized) {
  Report report;
  ProcessReport p;
  p.pid = 3;
  p.command = {"/bin/a;b"};
  LeakGroup g;
  g.kind = LeakKind::kDefinite;
  g.bytes = 5;
  g.stack = {testing::symbol_frame(0x10, "/lib/libx.so", 0x10, ""),
             testing::symbol_frame(0x20, "/bin/a", 0x20, "f;g")};
  p.leaks = {g, g};
  report.processes.push_back(p);
  EXPECT_EQ(collapsed(report), "a:b;f:g;?? (libx.so) 10\n");
}

// The same program twice (a test suite's runs): the later process is "prog #2", the pid is
// never part of the name, so two runs give the same root frames.
TEST(CollapsedRenderer, RootFramesAreStableAcrossRuns) {
  Report report = testing::sample_report();
  report.processes.push_back(report.processes[0]);
  report.processes[1].pid = 99999;
  std::string text = collapsed(report);
  EXPECT_NE(text.find("\nprog #2;main;inline_helper;read_config 4096\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("1234"), std::string::npos) << text;
  EXPECT_EQ(text.find("99999"), std::string::npos) << text;
}

}  // namespace
}  // namespace memtrack::report
