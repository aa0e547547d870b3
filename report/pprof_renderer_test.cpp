// Tests of the leak report as a pprof profile (report/pprof_renderer.h), decoded with
// libprotobuf; formats_agree_test.cpp checks its totals, the CLI tests read it with pprof.
#include "report/pprof_renderer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/pprof_testing.h"
#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using testing::text_of;

perftools::profiles::Profile pprof(const Report& report, const PprofOptions& options = {}) {
  std::ostringstream out;
  render_pprof(report, out, options);
  return testing::decode_profile(out.str());
}

TEST(PprofRenderer, SampleTypesCommentsAndLabels) {
  PprofOptions options;
  options.version = "1.2.3";
  auto p = pprof(testing::sample_report(), options);
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(text_of(p, p.sample_type(0).type()), "leaked_objects");
  EXPECT_EQ(text_of(p, p.sample_type(0).unit()), "count");
  EXPECT_EQ(text_of(p, p.sample_type(1).type()), "leaked_space");
  EXPECT_EQ(text_of(p, p.sample_type(1).unit()), "bytes");
  EXPECT_EQ(text_of(p, p.default_sample_type()), "leaked_space");
  ASSERT_EQ(p.comment_size(), 2);
  EXPECT_EQ(text_of(p, p.comment(0)), "memtrack 1.2.3");
  EXPECT_EQ(text_of(p, p.comment(1)), "1234: ./prog arg1");
  // definite, possible, indirect: still reachable is not shown by default.
  ASSERT_EQ(p.sample_size(), 3);
  EXPECT_EQ(testing::label_of(p, p.sample(0), "kind"), "definite");
  EXPECT_EQ(testing::num_label_of(p, p.sample(0), "pid"), 1234);
  EXPECT_EQ(p.sample(0).value(0), 1);
  EXPECT_EQ(p.sample(0).value(1), 4096);
}

TEST(PprofRenderer, PrintedFramesOnlyWithInlinedLines) {
  auto p = pprof(testing::sample_report());
  // read_config <- inline_helper (inlined) <- main; the frames below main are left out.
  EXPECT_EQ(testing::stack_names(p, p.sample(0)),
            (std::vector<std::string>{"read_config", "inline_helper", "main"}));
  EXPECT_EQ(p.sample(0).location_id_size(), 2);
}

TEST(PprofRenderer, ModulesBecomeMappingsAndInternalGroupsAreLeftOut) {
  Report report = testing::sample_report();
  RawModule leaky;
  leaky.path = "/work/build/leaky";
  leaky.start = 0x555555554000;
  leaky.end = 0x555555560000;
  leaky.build_id = {0xab, 0xcd};
  report.processes[0].modules = {leaky};
  report.processes[0].leaks[0].runtime_internal = true;
  auto p = pprof(report);
  ASSERT_EQ(p.sample_size(), 2);
  EXPECT_EQ(testing::label_of(p, p.sample(0), "kind"), "possible");
  ASSERT_GE(p.mapping_size(), 1);
  EXPECT_EQ(text_of(p, p.mapping(0).filename()), "/work/build/leaky");
  EXPECT_EQ(text_of(p, p.mapping(0).build_id()), "abcd");
  EXPECT_EQ(p.mapping(0).memory_start(), 0x555555554000u);
}

// The running heap (memtrack run --pprof-http): Go's four types, the allocation totals as
// samples of their own (pid label only, in-use values 0), the groups with alloc values 0.
TEST(PprofRenderer, InUseCarriesAllocationTotalsApart) {
  Report report = testing::sample_report();
  AllocationTotal total;
  total.stack = report.processes[0].leaks[0].stack;
  total.blocks = 7;
  total.bytes = 7000;
  report.processes[0].allocation_totals = {total};
  PprofOptions options;
  options.in_use = true;
  options.show_kinds = LeakKinds::all();
  auto p = pprof(report, options);
  ASSERT_EQ(p.sample_type_size(), 4);
  const char* types[] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(text_of(p, p.sample_type(i).type()), types[i]);
  EXPECT_EQ(text_of(p, p.default_sample_type()), "inuse_space");
  ASSERT_GE(p.sample_size(), 2);
  const auto& alloc = p.sample(0);
  EXPECT_EQ(testing::label_of(p, alloc, "kind"), "");
  EXPECT_EQ(testing::num_label_of(p, alloc, "pid"), 1234);
  EXPECT_EQ(std::vector<int64_t>(alloc.value().begin(), alloc.value().end()),
            (std::vector<int64_t>{7, 7000, 0, 0}));
  EXPECT_EQ(testing::stack_names(p, alloc), testing::stack_names(p, p.sample(1)));
  const auto& group = p.sample(1);
  EXPECT_EQ(testing::label_of(p, group, "kind"), "definite");
  EXPECT_EQ(std::vector<int64_t>(group.value().begin(), group.value().end()),
            (std::vector<int64_t>{0, 0, 1, 4096}));
  report.processes[0].allocation_totals_incomplete = true;
  p = pprof(report, options);
  EXPECT_EQ(text_of(p, p.comment(2)),
            "1234: alloc_objects and alloc_space are incomplete (out of memory)");
}

TEST(PprofRenderer, EmptyReportIsAValidProfile) {
  auto p = pprof(Report{});
  EXPECT_EQ(p.sample_size(), 0);
  EXPECT_EQ(p.sample_type_size(), 2);
}

}  // namespace
}  // namespace memtrack::report
