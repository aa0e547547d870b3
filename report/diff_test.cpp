// Tests of memtrack diff's matching (report/diff.h).
#include "report/diff.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/error.h"
#include "report/json_renderer.h"
#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using testing::debug_frame;
using testing::group;
using testing::symbol_frame;

Report report_of(std::vector<LeakGroup> leaks) {
  Report report;
  report.processes.emplace_back();
  report.processes.back().leaks = std::move(leaks);
  return report;
}

std::vector<Frame> stack_at(const char* function, int line, uint64_t address = 0x1000) {
  return {debug_frame(address, function, "/src/v1/leak.c", line, 3),
          debug_frame(address + 0x40, "main", "/src/v1/leak.c", line + 20, 3),
          symbol_frame(0x7ffff7dd21ca, testing::kLibc, 0x271ca, "__libc_start_call_main")};
}

TEST(KeyFrame, FunctionAndBasenameWithoutLineOrAddress) {
  EXPECT_EQ(key_frame(debug_frame(0x1234, "make", "/a/b/leak.c", 7, 2)), "make (leak.c)");
  EXPECT_EQ(key_frame(symbol_frame(0x1, "/lib/libc.so.6", 0x10, "strdup")), "strdup (libc.so.6)");
  EXPECT_EQ(key_frame(symbol_frame(0x1, "/lib/libx.so", 0x10, "")), "?? (libx.so)");
}

TEST(Diff, MovedLinesAndAddressesAreUnchanged) {
  Report base = report_of({group(LeakKind::kDefinite, 100, 1, stack_at("make", 10))});
  std::vector<Frame> moved = stack_at("make", 25, 0x2000);
  moved[0].file = "/elsewhere/leak.c";
  Report now = report_of({group(LeakKind::kDefinite, 100, 1, moved)});
  Diff diff = diff_reports(base, now, LeakKinds::all());
  ASSERT_EQ(diff.entries.size(), 1u);
  EXPECT_EQ(diff.entries[0].status, DiffStatus::kUnchanged);
}

TEST(Diff, FramesBelowMainAreNotPartOfTheKey) {
  Report base = report_of({group(LeakKind::kDefinite, 100, 1, stack_at("make", 10))});
  std::vector<Frame> renamed = stack_at("make", 10);
  renamed.back() = symbol_frame(0x1100, "/build/prog-v2", 0x1100, "_start");
  Report now = report_of({group(LeakKind::kDefinite, 100, 1, renamed)});
  Diff diff = diff_reports(base, now, LeakKinds::all());
  ASSERT_EQ(diff.entries.size(), 1u);
  EXPECT_EQ(diff.entries[0].status, DiffStatus::kUnchanged);
  EXPECT_EQ(diff.entries[0].frames, (std::vector<std::string>{"make (leak.c)", "main (leak.c)"}));
}

TEST(Diff, EveryStatusAndSortOrder) {
  Report base = report_of({group(LeakKind::kDefinite, 100, 1, stack_at("grows", 1)),
                           group(LeakKind::kDefinite, 100, 2, stack_at("shrinks", 1)),
                           group(LeakKind::kDefinite, 8, 1, stack_at("goes", 1)),
                           group(LeakKind::kDefinite, 8, 1, stack_at("stays", 1))});
  Report now = report_of({group(LeakKind::kDefinite, 300, 3, stack_at("grows", 1)),
                          group(LeakKind::kDefinite, 100, 1, stack_at("shrinks", 1)),
                          group(LeakKind::kDefinite, 8, 1, stack_at("stays", 1)),
                          group(LeakKind::kDefinite, 5, 1, stack_at("small_new", 1)),
                          group(LeakKind::kDefinite, 50, 1, stack_at("big_new", 1))});
  Diff diff = diff_reports(base, now, LeakKinds::all());
  std::vector<std::pair<std::string, std::string>> got;
  for (const DiffEntry& e : diff.entries) got.emplace_back(diff_status_name(e.status), e.frames[0]);
  std::vector<std::pair<std::string, std::string>> want = {
      {"new", "big_new (leak.c)"}, {"new", "small_new (leak.c)"},
      {"grown", "grows (leak.c)"}, {"shrunk", "shrinks (leak.c)"},
      {"gone", "goes (leak.c)"},   {"unchanged", "stays (leak.c)"}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(diff.count(DiffStatus::kNew), 2u);
}

TEST(Diff, SameKeyIsSummedAcrossGroupsAndProcesses) {
  Report base = report_of({group(LeakKind::kDefinite, 10, 1, stack_at("f", 1))});
  Report now = report_of({group(LeakKind::kDefinite, 10, 1, stack_at("f", 1)),
                          group(LeakKind::kDefinite, 10, 1, stack_at("f", 2))});
  now.processes.push_back(now.processes.front());
  Diff diff = diff_reports(base, now, LeakKinds::all());
  ASSERT_EQ(diff.entries.size(), 1u);
  EXPECT_EQ(diff.entries[0].status, DiffStatus::kGrown);
  EXPECT_EQ(diff.entries[0].new_bytes, 40u);
  EXPECT_EQ(diff.entries[0].new_blocks, 4u);
}

TEST(Diff, KindIsPartOfTheKeyAndKindsFilter) {
  Report base = report_of({group(LeakKind::kPossible, 10, 1, stack_at("f", 1))});
  Report now = report_of({group(LeakKind::kDefinite, 10, 1, stack_at("f", 1)),
                          group(LeakKind::kReachable, 10, 1, stack_at("g", 1))});
  Diff diff = diff_reports(base, now, kDefaultShownKinds);
  ASSERT_EQ(diff.entries.size(), 2u);
  EXPECT_EQ(diff.entries[0].status, DiffStatus::kNew);
  EXPECT_EQ(diff.entries[0].kind, LeakKind::kDefinite);
  EXPECT_EQ(diff.entries[1].status, DiffStatus::kGone);
}

TEST(ReadJsonReport, RoundTripsTheLeakGroups) {
  Report report = report_of({group(LeakKind::kIndirect, 24, 2, stack_at("f", 3))});
  report.processes[0].pid = 42;
  std::stringstream json;
  render_json(report, json, "1.0");
  Report back = read_json_report(json, "r.json");
  ASSERT_EQ(back.processes.size(), 1u);
  EXPECT_EQ(back.processes[0].pid, 42u);
  ASSERT_EQ(back.processes[0].leaks.size(), 1u);
  const LeakGroup& g = back.processes[0].leaks[0];
  EXPECT_EQ(g.kind, LeakKind::kIndirect);
  EXPECT_EQ(g.bytes, 24u);
  EXPECT_EQ(g.blocks, 2u);
  EXPECT_EQ(g.stack.size(), 3u);
  EXPECT_EQ(diff_reports(report, back, LeakKinds::all()).count(DiffStatus::kUnchanged), 1u);
}

TEST(ReadJsonReport, RejectsOtherJson) {
  std::stringstream not_json("{\"a\": 1}");
  EXPECT_THROW(read_json_report(not_json, "x.json"), Error);
  std::stringstream bad_kind(
      R"({"memtrack": {}, "processes": [{"pid": 1, "leaks": [{"kind": "odd", "bytes": 1,
          "blocks": 1, "stack": []}]}]})");
  EXPECT_THROW(read_json_report(bad_kind, "x.json"), Error);
  std::stringstream garbage("not json");
  EXPECT_THROW(read_json_report(garbage, "x.json"), Error);
}

}  // namespace
}  // namespace memtrack::report
