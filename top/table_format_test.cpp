// Number formats and the table lines.
#include "top/table_format.h"

#include <gtest/gtest.h>

namespace memtrack::top {
namespace {

TEST(FormatKb, Units) {
  EXPECT_EQ(format_kb(0), "0K");
  EXPECT_EQ(format_kb(99999), "99999K");
  EXPECT_EQ(format_kb(100000), "97.7M");
  EXPECT_EQ(format_kb(123456789), "117.7G");
  EXPECT_EQ(format_kb(std::nullopt), "-");
  EXPECT_EQ(format_signed_kb(0), "0");
  EXPECT_EQ(format_signed_kb(512), "+512K");
  EXPECT_EQ(format_signed_kb(-1536000), "-1500.0M");
  EXPECT_EQ(format_rate(std::nullopt), "-");
  EXPECT_EQ(format_rate(0.4), "0");
  EXPECT_EQ(format_rate(3600.0), "+3600K");
}

TEST(FormatCpuTime, MinutesSecondsHundredths) {
  EXPECT_EQ(format_cpu_time(0, 100), "0:00.00");
  EXPECT_EQ(format_cpu_time(125, 100), "0:01.25");
  EXPECT_EQ(format_cpu_time(366000, 100), "61:00.00");
  EXPECT_EQ(format_cpu_time(1000, 1000), "0:01.00");
}

ProcessRow process() {
  ProcessRow p;
  p.info.pid = 4242;
  p.info.rss_kb = 5120;
  p.info.pss_kb = 2048;
  p.info.swap_kb = 0;
  p.info.name = "grow";
  p.info.cmdline = "./grow --fast";
  p.user = "averylongname";
  p.growth_kb = 1024;
  p.kb_per_min = 6144;
  p.growing = true;
  p.info.threads = {{4243, 4242, "worker", 'R', 125}};
  return p;
}

TEST(FormatRow, ProcessLine) {
  ProcessRow p = process();
  EXPECT_EQ(format_header(0),
            "    PID USER          RSS      PSS      USS     SWAP   GROWTH     /MIN G COMMAND");
  EXPECT_EQ(
      format_row({&p, nullptr, ""}, 0, 100),
      "   4242 averylo+    5120K    2048K        -       0K   +1024K   +6144K ^ ./grow --fast");
  p.growing = false;
  p.kb_per_min.reset();
  EXPECT_EQ(
      format_row({&p, nullptr, "`- "}, 0, 100),
      "   4242 averylo+    5120K    2048K        -       0K   +1024K        -   `- ./grow --fast");
}

TEST(FormatRow, ThreadLine) {
  ProcessRow p = process();
  EXPECT_EQ(format_row({&p, &p.info.threads[0], "|- "}, 0, 100),
            "   4243          tgid 4242     R  cpu  0:01.25                           |- worker");
}

TEST(FormatRow, CutToWidthAtCharacterBoundary) {
  ProcessRow p = process();
  p.info.cmdline = "./x \xc3\xa9\xc3\xa9";  // "./x éé"
  std::string full = format_row({&p, nullptr, ""}, 0, 100);
  EXPECT_EQ(format_row({&p, nullptr, ""}, 10, 100), full.substr(0, 10));
  EXPECT_EQ(format_row({&p, nullptr, ""}, full.size() - 1, 100), full.substr(0, full.size() - 2));
  EXPECT_EQ(format_header(7), "    PID");
}

TEST(HeaderSpan, PointsAtTheTitles) {
  std::string header = format_header(0);
  EXPECT_EQ(header.substr(header_span(SortColumn::kPid).first, 7), "    PID");
  auto [offset, length] = header_span(SortColumn::kGrowth);
  EXPECT_EQ(header.substr(offset, length), "  GROWTH");
  std::tie(offset, length) = header_span(SortColumn::kRate);
  EXPECT_EQ(header.substr(offset, length), "    /MIN");
  std::tie(offset, length) = header_span(SortColumn::kCommand);
  EXPECT_EQ(header.substr(offset, length), "COMMAND");
}

}  // namespace
}  // namespace memtrack::top
