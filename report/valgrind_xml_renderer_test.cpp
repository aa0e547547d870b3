// Tests of valgrind's XML output (report/valgrind_xml_renderer.h); the CLI tests compare it
// with valgrind's own XML for the same program.
#include "report/valgrind_xml_renderer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

std::string xml(const Report& report, LeakKinds shown = kDefaultShownKinds) {
  ValgrindXmlOptions options;
  options.show_kinds = shown;
  options.version = "1.2.3";
  options.tool_argv = {"memtrack", "run", "--xml=yes"};
  std::ostringstream out;
  render_valgrind_xml(report, out, options);
  return out.str();
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ValgrindXmlRenderer, HeadAsValgrindWritesIt) {
  std::string out = xml(testing::sample_report());
  EXPECT_EQ(out.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<valgrindoutput>\n\n"
                      "<protocolversion>4</protocolversion>\n"
                      "<protocoltool>memcheck</protocoltool>\n\n<preamble>\n",
                      0),
            0u);
  EXPECT_NE(out.find("<pid>1234</pid>\n<ppid>1200</ppid>\n<tool>memcheck</tool>\n\n<args>\n"
                     "  <vargv>\n    <exe>memtrack</exe>\n    <arg>run</arg>\n"
                     "    <arg>--xml=yes</arg>\n  </vargv>\n  <argv>\n    <exe>./prog</exe>\n"
                     "    <arg>arg1</arg>\n  </argv>\n</args>\n"),
            std::string::npos);
  EXPECT_LT(out.find("<state>RUNNING</state>"), out.find("<kind>InvalidFree</kind>"));
  EXPECT_LT(out.find("<kind>MismatchedFree</kind>"), out.find("<state>FINISHED</state>"));
  EXPECT_LT(out.find("<state>FINISHED</state>"), out.find("<kind>Leak_"));
  EXPECT_TRUE(
      out.ends_with("</errorcounts>\n\n<suppcounts>\n</suppcounts>\n\n"
                    "</valgrindoutput>\n\n"));
}

TEST(ValgrindXmlRenderer, LeakRecordsSmallestFirstWithDirectAndIndirect) {
  std::string out = xml(testing::sample_report());
  // Shown by default: definite, possible, indirect (not the reachable group): 3 of 4 records.
  EXPECT_EQ(occurrences(out, "<kind>Leak_"), 3u);
  EXPECT_EQ(occurrences(out, "<kind>Leak_StillReachable</kind>"), 0u);
  size_t indirect = out.find(
      "<text>96 bytes in 2 blocks are indirectly lost in loss record 1 of 4"
      "</text>\n    <leakedbytes>96</leakedbytes>\n"
      "    <leakedblocks>2</leakedblocks>");
  size_t possible = out.find("<text>144 bytes in 3 blocks are possibly lost in loss record 2 of 4");
  size_t definite = out.find(
      "<kind>Leak_DefinitelyLost</kind>\n  <xwhat>\n    <text>4,192 (4,096 direct, 96 indirect) "
      "bytes in 1 blocks are definitely lost in loss record 4 of 4</text>\n"
      "    <leakedbytes>4192</leakedbytes>\n    <leakedblocks>1</leakedblocks>\n");
  ASSERT_NE(indirect, std::string::npos) << out;
  ASSERT_NE(possible, std::string::npos) << out;
  ASSERT_NE(definite, std::string::npos) << out;
  EXPECT_LT(indirect, possible);
  EXPECT_LT(possible, definite);
  EXPECT_EQ(occurrences(xml(testing::sample_report(), LeakKinds::all()),
                        "<kind>Leak_StillReachable</kind>"),
            1u);
}

TEST(ValgrindXmlRenderer, FramesSplitIntoDirAndFileCutBelowMain) {
  std::string out = xml(testing::sample_report());
  EXPECT_NE(out.find("    <frame>\n      <ip>0x5555555552FB</ip>\n"
                     "      <obj>/work/build/leaky</obj>\n      <fn>read_config</fn>\n"
                     "      <dir>examples</dir>\n      <file>leaky.c</file>\n"
                     "      <line>37</line>\n    </frame>\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("__libc_start_call_main"), std::string::npos);
  // No function, no file: ip and obj only.
  EXPECT_NE(out.find("<ip>0x7FFFF7E3D1F5</ip>\n      <obj>/lib/x86_64-linux-gnu/libc.so.6</obj>\n"
                     "    </frame>"),
            std::string::npos);
}

TEST(ValgrindXmlRenderer, MisuseErrorsWithAuxwhatAndCounts) {
  std::string out = xml(testing::sample_report());
  EXPECT_NE(out.find("<unique>0x0</unique>\n  <tid>1</tid>\n  <kind>InvalidFree</kind>\n"
                     "  <what>Invalid free() / delete / delete[] / realloc()</what>\n"),
            std::string::npos);
  EXPECT_NE(out.find("<auxwhat>Address 0x4a5b040 is 0 bytes inside a block of size 100 "
                     "free&apos;d</auxwhat>"),
            std::string::npos);
  EXPECT_NE(out.find("<auxwhat>Block was alloc&apos;d at</auxwhat>"), std::string::npos);
  EXPECT_NE(out.find("<auxwhat>Address 0x7fffffffe0c0 is on a thread&apos;s stack</auxwhat>"),
            std::string::npos);
  EXPECT_NE(out.find("<kind>MismatchedFree</kind>\n  <what>Mismatched free() / delete / delete "
                     "[]</what>"),
            std::string::npos);
  EXPECT_NE(out.find("<auxwhat>Address 0x4a5c0c0 is 0 bytes inside a block of size 128 "
                     "alloc&apos;d</auxwhat>"),
            std::string::npos);
  EXPECT_NE(out.find("<errorcounts>\n  <pair>\n    <count>2</count>\n    <unique>0x0</unique>\n"
                     "  </pair>\n  <pair>\n    <count>1</count>\n    <unique>0x1</unique>\n"),
            std::string::npos);
  EXPECT_EQ(occurrences(out, "<pair>"), 3u);  // the misuse errors, not the leaks
}

TEST(ValgrindXmlRenderer, DescriptorsMakeProtocol5) {
  Report report;
  report.processes.push_back(testing::with_resources(testing::sample_process()));
  std::string out = xml(report);
  EXPECT_NE(out.find("<protocolversion>5</protocolversion>"), std::string::npos);
  EXPECT_EQ(occurrences(out, "<kind>FdNotClosed</kind>"), 3u);
  EXPECT_NE(out.find("<kind>FdNotClosed</kind>\n  <fd>3</fd>\n  <path>/var/log/app.log</path>\n"
                     "  <what>Open file descriptor 3: file /var/log/app.log, "
                     "open(O_WRONLY|O_CREAT|O_APPEND)</what>\n  <stack>\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("<fd>7</fd>\n  <what>Open file descriptor 7: socket"), std::string::npos);
}

TEST(ValgrindXmlRenderer, EscapesAndNumbersErrorsAcrossProcesses) {
  Report report = testing::sample_report();
  ProcessReport other = testing::sample_process();
  other.pid = 99;
  other.command = {"./a<b>&\"c\"", "\x01"};
  report.processes.push_back(other);
  std::string out = xml(report);
  EXPECT_NE(out.find("<exe>./prog</exe>"), std::string::npos);  // the first process's args
  EXPECT_NE(out.find("<line>Errors of 2 processes: 1234 99</line>"), std::string::npos);
  EXPECT_NE(out.find("<unique>0x5</unique>"), std::string::npos);  // 6 misuse errors: 0x0-0x5
  EXPECT_NE(out.find("loss record 8 of 8"), std::string::npos);
  Report escaped;
  escaped.processes.push_back(other);
  EXPECT_NE(xml(escaped).find("<exe>./a&lt;b&gt;&amp;&quot;c&quot;</exe>\n    <arg>?</arg>"),
            std::string::npos);
}

TEST(ValgrindXmlRenderer, SuppcountsSumUsedSuppressionsOverProcesses) {
  Report report = testing::sample_report();
  report.processes[0].used_suppressions = {UsedSuppression{"vendor", "a.supp:1", 2, 64, 2, 1},
                                           UsedSuppression{"leak:<init>", "b.supp:3", 1, 8, 1, 0}};
  ProcessReport child = report.processes[0];
  child.pid = 1235;
  child.used_suppressions = {UsedSuppression{"vendor", "a.supp:1", 4, 40, 4, 0}};
  report.processes.push_back(child);
  std::string out = xml(report);
  EXPECT_NE(out.find("<suppcounts>\n  <pair>\n    <count>7</count>\n    <name>vendor</name>\n"
                     "  </pair>\n  <pair>\n    <count>1</count>\n"
                     "    <name>leak:&lt;init&gt;</name>\n  </pair>\n</suppcounts>\n\n"
                     "</valgrindoutput>\n\n"),
            std::string::npos);
}

TEST(ValgrindXmlRenderer, EmptyReportIsADocument) {
  std::string out = xml(Report{});
  EXPECT_NE(out.find("<pid>0</pid>"), std::string::npos);
  EXPECT_EQ(occurrences(out, "<error>"), 0u);
  EXPECT_TRUE(out.ends_with("</valgrindoutput>\n\n"));
}

TEST(ValgrindXmlRenderer, LeakKindNames) {
  EXPECT_STREQ(valgrind_leak_kind(LeakKind::kDefinite), "Leak_DefinitelyLost");
  EXPECT_STREQ(valgrind_leak_kind(LeakKind::kIndirect), "Leak_IndirectlyLost");
  EXPECT_STREQ(valgrind_leak_kind(LeakKind::kPossible), "Leak_PossiblyLost");
  EXPECT_STREQ(valgrind_leak_kind(LeakKind::kReachable), "Leak_StillReachable");
  EXPECT_STREQ(valgrind_leak_kind(LeakKind::kUnclassified), "Leak_PossiblyLost");
}

}  // namespace
}  // namespace memtrack::report
