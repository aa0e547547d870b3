// Tests of the JUnit XML report (report/junit_renderer.h); the CLI tests parse it with
// Python's xml.etree.
#include "report/junit_renderer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

std::string junit(const Report& report) {
  std::ostringstream out;
  render_junit(report, out);
  return out.str();
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(JunitRenderer, OneTestcasePerProcessWithCounts) {
  Report report = testing::sample_report();
  ProcessReport clean;
  clean.pid = 7;
  clean.command = {"./clean", "a<b"};
  report.processes.push_back(clean);
  ProcessReport killed = clean;
  killed.pid = 8;
  killed.has_leak_data = false;
  killed.no_data_reason = "killed";
  report.processes.push_back(killed);
  std::string xml = junit(report);
  EXPECT_EQ(occurrences(xml, "<testcase "), 3u);
  EXPECT_EQ(occurrences(xml, "<failure "), 1u);
  EXPECT_EQ(occurrences(xml, "<error type=\"no_data\" message=\"no leak data (killed)\"/>"), 1u);
  EXPECT_EQ(occurrences(xml, "tests=\"3\" failures=\"1\" errors=\"1\""), 2u);
  // Named by command, the same in every run; a second process with the same command gets
  // " #2"; the pids are properties.
  EXPECT_NE(xml.find("name=\"./clean &apos;a&lt;b&apos;\">\n      <properties>\n        "
                     "<property name=\"pid\" value=\"7\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"./clean &apos;a&lt;b&apos; #2\">\n      <properties>\n        "
                     "<property name=\"pid\" value=\"8\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure type=\"leaks\""), std::string::npos) << xml;
}

TEST(JunitRenderer, FailureListsEveryFailingGroupAndError) {
  Report report = testing::sample_report();
  std::string xml = junit(report);
  const ProcessReport& p = report.processes[0];
  size_t failing = 0;
  for (const LeakGroup& g : p.leaks) failing += JunitOptions().fail_kinds.contains(g.kind) ? 1 : 0;
  ASSERT_EQ(failing, 2u);
  EXPECT_EQ(occurrences(xml, " in "), failing + 1) << xml;  // + the message's "leaked in"
  EXPECT_EQ(occurrences(xml, "Double free"), 1u);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
}

TEST(JunitRenderer, ControlCharactersAndInvalidUtf8AreReplaced) {
  Report report;
  ProcessReport p;
  p.command = {std::string("x\x01y\xff\xc3\xa9\xe2\x82\xac\xed\xa0\x80\xc0\xaf")};
  report.processes.push_back(p);
  std::string xml = junit(report);
  for (char bad : {'\x01', '\xff', '\xed', '\xc0'}) {
    EXPECT_EQ(xml.find(bad), std::string::npos) << static_cast<int>(bad) << xml;
  }
  EXPECT_NE(xml.find("\xc3\xa9\xe2\x82\xac"), std::string::npos) << xml;
}

}  // namespace
}  // namespace memtrack::report
