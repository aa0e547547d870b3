// Tests of the speedscope file (report/speedscope_renderer.h); the CLI tests validate it
// against the schema of the speedscope npm package.
#include "report/speedscope_renderer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using nlohmann::ordered_json;

TEST(SpeedscopeRenderer, OneSampledProfilePerProcessAndKind) {
  SpeedscopeOptions options;
  options.version = "1.2.3";
  ordered_json file = to_speedscope(testing::sample_report(), options);
  EXPECT_EQ(file["$schema"], "https://www.speedscope.app/file-format-schema.json");
  EXPECT_EQ(file["exporter"], "memtrack 1.2.3");
  EXPECT_EQ(file["name"], "memtrack leaks: prog");
  const ordered_json& profiles = file["profiles"];
  ASSERT_EQ(profiles.size(), 3u);  // still reachable is not shown by default
  EXPECT_EQ(profiles[0]["name"], "prog definitely lost");
  EXPECT_EQ(profiles[1]["name"], "prog indirectly lost");
  EXPECT_EQ(profiles[2]["name"], "prog possibly lost");
  for (const ordered_json& profile : profiles) {
    EXPECT_EQ(profile["type"], "sampled");
    EXPECT_EQ(profile["unit"], "bytes");
    EXPECT_EQ(profile["startValue"], 0);
  }
  EXPECT_EQ(profiles[0]["endValue"], 4096);
  EXPECT_EQ(profiles[0]["weights"], ordered_json::array({4096}));
  EXPECT_EQ(profiles[1]["endValue"], 96);
  EXPECT_EQ(profiles[2]["endValue"], 144);
}

TEST(SpeedscopeRenderer, SamplesAreRootFirstWithPrintedFramesAndSharedFrames) {
  ordered_json file = to_speedscope(testing::sample_report());
  const ordered_json& frames = file["shared"]["frames"];
  const ordered_json& sample = file["profiles"][0]["samples"][0];
  // read_config <- inline_helper (inlined) <- main: frames below main are not printed.
  ASSERT_EQ(sample.size(), 3u);
  EXPECT_EQ(
      frames[sample[0].get<size_t>()],
      ordered_json({{"name", "main"}, {"file", "examples/leaky.c"}, {"line", 55}, {"col", 18}}));
  EXPECT_EQ(frames[sample[1].get<size_t>()]["name"], "inline_helper");
  EXPECT_EQ(frames[sample[2].get<size_t>()]["name"], "read_config");
  EXPECT_EQ(frames[sample[2].get<size_t>()]["line"], 37);
  // The indirect group: a symbol without file, a libc frame without name, an unknown one.
  const ordered_json& worker = file["profiles"][1]["samples"][0];
  ASSERT_EQ(worker.size(), 3u);
  EXPECT_EQ(frames[worker[0].get<size_t>()], ordered_json({{"name", "?? (?)"}}));
  EXPECT_EQ(frames[worker[1].get<size_t>()], ordered_json({{"name", "?? (libc.so.6)"}}));
  EXPECT_EQ(frames[worker[2].get<size_t>()], ordered_json({{"name", "worker"}}));
}

TEST(SpeedscopeRenderer, FramesAreSharedAcrossProcesses) {
  Report report = testing::sample_report();
  report.processes.push_back(report.processes[0]);
  report.processes[1].pid = 1235;
  ordered_json file = to_speedscope(report);
  EXPECT_EQ(file["profiles"].size(), 6u);
  EXPECT_EQ(file["profiles"][3]["name"], "prog #2 definitely lost");
  EXPECT_EQ(file["profiles"][3]["samples"], file["profiles"][0]["samples"]);
}

TEST(SpeedscopeRenderer, AllKindsAndEmptyReport) {
  SpeedscopeOptions options;
  options.show_kinds = LeakKinds::all();
  ordered_json all = to_speedscope(testing::sample_report(), options);
  ASSERT_EQ(all["profiles"].size(), 4u);
  EXPECT_EQ(all["profiles"][3]["name"], "prog still reachable");
  ordered_json empty = to_speedscope(Report{});
  EXPECT_EQ(empty["profiles"], ordered_json::array());
  EXPECT_EQ(empty["shared"]["frames"], ordered_json::array());
  std::ostringstream out;
  render_speedscope(Report{}, out);
  EXPECT_EQ(out.str().back(), '\n');
  EXPECT_EQ(ordered_json::parse(out.str()), empty);
}

}  // namespace
}  // namespace memtrack::report
