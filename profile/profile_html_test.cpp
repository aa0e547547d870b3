// The heap profile page's model (profile_html.h): the JSON report as it is, the chart's
// columns, the flame graphs' stacks with shared frames, and the merging of the series.
#include "profile/profile_html.h"

#include <gtest/gtest.h>

#include <sstream>

namespace memtrack::profile {
namespace {

SeriesPoint point(uint64_t time, uint64_t heap, uint64_t heap_max, uint64_t allocated,
                  uint64_t allocations, uint64_t rss) {
  return {time, heap, heap_max, allocated, allocations, rss};
}

// Three sites: 1 holds the peak, 2 makes temporaries, 3 leaks; 4 was never used.
ProfileAnalysis sample_analysis() {
  ProfileAnalysis a;
  a.meta.pid = 42;
  a.meta.complete = true;
  // No modules: frames are bare addresses, named by the symbolizer as unknown. Stacks 1 and 2
  // share their outer address, so the model writes that frame once.
  a.meta.stacks = {{1, {0x1000, 0x9000}}, {2, {0x2000, 0x9000}}, {3, {0x3000}}};
  a.sites.resize(5);
  a.sites[1] = {.allocations = 4, .allocated_bytes = 4096, .peak_bytes = 4096, .peak_blocks = 4};
  a.sites[2] = {.allocations = 100, .allocated_bytes = 1000, .temporary = 100};
  a.sites[3] = {.allocations = 2,
                .allocated_bytes = 20,
                .live_bytes = 20,
                .live_blocks = 2,
                .peak_bytes = 10,
                .peak_blocks = 1};
  a.allocations = 106;
  a.frees = 104;
  a.allocated_bytes = 5116;
  a.temporary = 100;
  a.peak_bytes = 4106;
  a.peak_blocks = 5;
  a.peak_time_us = 2500;
  a.end_time_us = 6900;
  a.live_bytes = 20;
  a.live_blocks = 2;
  a.bucket_us = 1000;
  for (uint64_t i = 0; i < 7; ++i) {
    a.series.push_back(point(i * 1000, i * 10, i * 10 + 5, i * 100, i, i == 3 ? 8192 : 0));
  }
  return a;
}

TEST(CoarsenSeries, MergesPairsAsTheAnalysisDoes) {
  ProfileAnalysis a = sample_analysis();
  coarsen_series(a, 3);
  // 7 points -> 4 -> 2: each step doubles the bucket.
  ASSERT_EQ(a.series.size(), 2u);
  EXPECT_EQ(a.bucket_us, 4000u);
  const SeriesPoint& first = a.series[0];  // buckets 0..3
  EXPECT_EQ(first.time_us, 0u);
  EXPECT_EQ(first.heap_bytes, 30u);  // live at the end of its last bucket
  EXPECT_EQ(first.heap_max_bytes, 35u);
  EXPECT_EQ(first.allocated_bytes, 600u);
  EXPECT_EQ(first.allocations, 6u);
  EXPECT_EQ(first.rss_bytes, 8192u);
  const SeriesPoint& second = a.series[1];  // buckets 4..6
  EXPECT_EQ(second.time_us, 4000u);
  EXPECT_EQ(second.heap_bytes, 60u);
  EXPECT_EQ(second.heap_max_bytes, 65u);
  EXPECT_EQ(second.allocated_bytes, 1500u);
  EXPECT_EQ(second.allocations, 15u);
  EXPECT_EQ(second.rss_bytes, 0u);
}

TEST(CoarsenSeries, LeavesASmallSeriesAlone) {
  ProfileAnalysis a = sample_analysis();
  coarsen_series(a, 7);
  EXPECT_EQ(a.series.size(), 7u);
  EXPECT_EQ(a.bucket_us, 1000u);
}

TEST(ProfileHtmlModel, CarriesTheJsonReportAndTheFinerChart) {
  ProfileAnalysis a = sample_analysis();
  std::vector<SeriesPoint> chart = a.series;
  coarsen_series(a, 3);
  StackNames names(a.meta);
  ProfileOutputOptions options;
  options.program = "/bin/prog";
  nlohmann::ordered_json model = profile_html_model(a, chart, 1000, names, options, "1.2.3");
  EXPECT_EQ(model["version"], "1.2.3");
  EXPECT_EQ(model["profile"], profile_to_json(a, names, options));
  EXPECT_EQ(model["profile"]["series"]["points"].size(), 2u);
  const nlohmann::ordered_json& c = model["chart"];
  EXPECT_EQ(c["bucket_us"], 1000);
  EXPECT_EQ(c["time_us"], nlohmann::ordered_json({0, 1000, 2000, 3000, 4000, 5000, 6000}));
  EXPECT_EQ(c["heap_bytes"], nlohmann::ordered_json({0, 10, 20, 30, 40, 50, 60}));
  EXPECT_EQ(c["heap_max_bytes"], nlohmann::ordered_json({5, 15, 25, 35, 45, 55, 65}));
  EXPECT_EQ(c["allocated_bytes"], nlohmann::ordered_json({0, 100, 200, 300, 400, 500, 600}));
  EXPECT_EQ(c["allocations"], nlohmann::ordered_json({0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(c["rss_bytes"], nlohmann::ordered_json({0, 0, 0, 8192, 0, 0, 0}));
  EXPECT_EQ(model["sites_total"], 3);
}

TEST(ProfileHtmlModel, StacksShareTheirFrames) {
  ProfileAnalysis a = sample_analysis();
  StackNames names(a.meta);
  nlohmann::ordered_json model = profile_html_model(a, a.series, a.bucket_us, names, {}, "1");
  const nlohmann::ordered_json& stacks = model["stacks"];
  ASSERT_EQ(stacks.size(), 3u);  // site 4 has nothing to draw
  EXPECT_EQ(stacks[0]["stack_id"], 1);
  EXPECT_EQ(stacks[0]["allocated_bytes"], 4096);
  EXPECT_EQ(stacks[0]["peak_bytes"], 4096);
  EXPECT_EQ(stacks[1]["temporary"], 100);
  EXPECT_EQ(stacks[2]["leaked_bytes"], 20);
  EXPECT_EQ(stacks[2]["window_bytes"], 0);
  // 0x1000, 0x9000, 0x2000, 0x3000: four frames, the shared one written once.
  EXPECT_EQ(model["frames"].size(), 4u);
  EXPECT_EQ(stacks[0]["frames"], nlohmann::ordered_json({0, 1}));
  EXPECT_EQ(stacks[1]["frames"], nlohmann::ordered_json({2, 1}));
  EXPECT_EQ(stacks[2]["frames"], nlohmann::ordered_json({3}));
}

TEST(ProfileHtmlModel, ThePageIsSelfContained) {
  ProfileAnalysis a = sample_analysis();
  StackNames names(a.meta);
  std::ostringstream page;
  render_profile_html(profile_html_model(a, a.series, a.bucket_us, names, {}, "1"), "<prog>", page,
                      "1");
  const std::string html = page.str();
  EXPECT_NE(html.find("<title>memtrack heap profile: &lt;prog&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("V.renderProfile"), std::string::npos);  // profile.js is inlined
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
}

}  // namespace
}  // namespace memtrack::profile
