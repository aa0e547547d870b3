// The JSON document: field names, nulls for unknown values, threads, invalid UTF-8.
#include "proc/json_output.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace memtrack::top {
namespace {

TEST(FormatJson, Fields) {
  ProcessRow p;
  p.info.pid = 10;
  p.info.ppid = 1;
  p.info.uid = 1000;
  p.info.name = "srv";
  p.info.cmdline = "srv -x \xff";
  p.info.state = 'S';
  p.info.rss_kb = 100;
  p.info.num_threads = 2;
  p.info.cpu_ticks = 250;
  p.info.threads = {{10, 10, "srv", 'S', 50}, {11, 10, "io", 'D', 200}};
  p.user = "alice";
  p.growth_kb = 40;
  p.kb_per_min = 123.456;
  p.growing = true;
  ProcessRow kernel;
  kernel.info.pid = 2;
  kernel.info.kernel_thread = true;
  kernel.info.name = "kthreadd";
  kernel.info.rss_kb = kernel.info.pss_kb = kernel.info.uss_kb = kernel.info.swap_kb = 0;
  kernel.user = "root";
  std::vector<ViewRow> rows = {
      {&p, nullptr, ""}, {&p, &p.info.threads[0], "|- "}, {&kernel, nullptr, ""}};
  nlohmann::json doc = nlohmann::json::parse(format_json(rows, 100));
  EXPECT_EQ(doc["version"], 1);
  ASSERT_EQ(doc["processes"].size(), 2u);  // thread rows do not add processes
  const nlohmann::json& j = doc["processes"][0];
  EXPECT_EQ(j["pid"], 10);
  EXPECT_EQ(j["ppid"], 1);
  EXPECT_EQ(j["user"], "alice");
  EXPECT_EQ(j["uid"], 1000);
  EXPECT_EQ(j["command"], "srv -x \xef\xbf\xbd");  // U+FFFD
  EXPECT_EQ(j["rss_kb"], 100);
  EXPECT_TRUE(j["pss_kb"].is_null());
  EXPECT_TRUE(j["uss_kb"].is_null());
  EXPECT_TRUE(j["swap_kb"].is_null());
  EXPECT_EQ(j["growth_kb"], 40);
  EXPECT_EQ(j["growth_kb_per_min"], 123.5);
  EXPECT_EQ(j["growing"], true);
  EXPECT_EQ(j["cpu_seconds"], 2.5);
  ASSERT_EQ(j["threads"].size(), 2u);
  EXPECT_EQ(j["threads"][1],
            (nlohmann::json{
                {"tid", 11}, {"tgid", 10}, {"name", "io"}, {"state", "D"}, {"cpu_seconds", 2.0}}));
  const nlohmann::json& k = doc["processes"][1];
  EXPECT_EQ(k["command"], "[kthreadd]");
  EXPECT_EQ(k["kernel_thread"], true);
  EXPECT_EQ(k["pss_kb"], 0);
  EXPECT_TRUE(k["uid"].is_null());
  EXPECT_TRUE(k["growth_kb_per_min"].is_null());
}

TEST(FormatJson, Empty) {
  EXPECT_EQ(format_json({}, 100), "{\n  \"version\": 1,\n  \"processes\": []\n}\n");
}

}  // namespace
}  // namespace memtrack::top
