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

TEST(PprofRenderer, EmptyReportIsAValidProfile) {
  auto p = pprof(Report{});
  EXPECT_EQ(p.sample_size(), 0);
  EXPECT_EQ(p.sample_type_size(), 2);
}

}  // namespace
}  // namespace memtrack::report
