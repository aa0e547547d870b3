// Text report sections beyond the leak groups: --gen-suppressions blocks, the crash section,
// the header of an on-demand check, the used suppressions (-v) and max_leaks.
#include <gtest/gtest.h>

#include "report/test_fixtures.h"
#include "report/text_render_testing.h"
#include "report/text_renderer.h"

namespace memtrack::report {
namespace {

using testing::render;
using testing::sample_process;
using testing::sample_report;
using testing::with_version;

// --gen-suppressions=yes: a block under each group, its lines without the "==PID==" prefix
// so that they can be copied into a file as they are.
TEST(TextRenderer, SuppressionBlocksUnderGroups) {
  TextOptions options = with_version();
  options.gen_suppressions = GenSuppressions::kBlock;
  std::string text = render(sample_report(), options);
  EXPECT_NE(text.find("==1234==    #2 main (examples/leaky.c:55:18) leaky\n"
                      "{\n"
                      "   memtrack:leak:read_config\n"
                      "   Memcheck:Leak\n"
                      "   match-leak-kinds: definite\n"
                      "   fun:read_config\n"
                      "   fun:inline_helper\n"
                      "   fun:main\n"
                      "}\n"
                      "==1234==\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("==1234==    #2 ?? (0x7ffff7ebd8ec)\n"
                      "{\n"
                      "   memtrack:leak:worker\n"
                      "   Memcheck:Leak\n"
                      "   match-leak-kinds: indirect\n"
                      "   fun:worker\n"
                      "   obj:/lib/x86_64-linux-gnu/libc.so.6\n"
                      "   obj:???\n"
                      "}\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("suppress with"), std::string::npos);
}

TEST(TextRenderer, CrashSectionComesFirstEvenWithoutLeaks) {
  ProcessReport p;
  p.pid = 77;
  p.ppid = 1;
  p.command = {"./prog"};
  p.exit.how = ExitInfo::How::kSignal;
  p.exit.signal = 11;
  CrashReport crash;
  crash.signal = 11;
  crash.code = 1;
  crash.has_address = true;
  crash.address = 0x10;
  crash.tid = 78;
  Frame top;
  top.function = "crash_here";
  top.file = "/src/prog.c";
  top.line = 6;
  top.column = 5;
  top.module = "/src/prog";
  crash.stack = {top};
  p.crash = crash;
  std::string text = render(p);
  EXPECT_NE(text.find("==77== CRASH: SIGSEGV (signal 11) in thread 78: address not mapped at "
                      "address 0x10\n==77==    #0 crash_here (/src/prog.c:6:5) prog\n"),
            std::string::npos)
      << text;
  // The full report, not the one-line summary of a process without leaks.
  EXPECT_NE(text.find("==77== LEAK SUMMARY: no leaks"), std::string::npos) << text;
}

TEST(TextRenderer, OnDemandCheckSaysSoInItsHeader) {
  ProcessReport p;
  p.pid = 5;
  p.ppid = 4;
  p.command = {"./prog"};
  p.exit.how = ExitInfo::How::kRunning;
  p.occasion = "on-demand leak check 1 (memtrack_do_leak_check)";
  EXPECT_NE(render(p).find("./prog (pid 5, parent 4) on-demand leak check 1 "
                           "(memtrack_do_leak_check)"),
            std::string::npos)
      << render(p);
}

// -v: one line per entry that matched, after the LEAK SUMMARY; none without -v.
TEST(TextRenderer, UsedSuppressionsAfterTheSummary) {
  ProcessReport p = sample_process();
  p.used_suppressions = {UsedSuppression{"leak:vendor_init", "/src/app.supp:3", 1, 100, 1, 0},
                         UsedSuppression{"old-sockets", "/src/vg.supp:12", 0, 0, 0, 2}};
  EXPECT_EQ(render(p).find("used_suppression"), std::string::npos);
  TextOptions options;
  options.used_suppressions = true;
  std::string text = render(p, options);
  EXPECT_NE(text.find("==1234== used_suppression:      1 leak:vendor_init /src/app.supp:3 (100 "
                      "bytes in 1 block)\n"
                      "==1234== used_suppression:      2 old-sockets /src/vg.supp:12 (2 "
                      "descriptors)\n"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("LEAK SUMMARY"), text.find("used_suppression"));
  // A process without leaks still lists what was suppressed.
  ProcessReport clean;
  clean.pid = 9;
  clean.command = {"./prog"};
  clean.summary.suppressed.bytes = 8;
  clean.summary.suppressed.blocks = 1;
  clean.used_suppressions = {UsedSuppression{"leak:x", "s:1", 1, 8, 1, 0}};
  EXPECT_NE(render(clean, options)
                .find("==9== used_suppression:      1 leak:x s:1 (8 bytes in 1 "
                      "block)\n"),
            std::string::npos)
      << render(clean, options);
}

// max_leaks: the largest groups are listed, the rest counted in one line; the summary keeps
// every group's bytes.
TEST(TextRenderer, MaxGroupsListsTheLargestAndCountsTheRest) {
  ProcessReport p = sample_process();
  ASSERT_EQ(p.leaks.size(), 4u);
  TextOptions options;
  options.max_groups = 1;
  std::string text = render(p, options);
  EXPECT_NE(text.find("==1234== 2 more groups not listed (max_leaks=1)\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find(" is indirectly lost"), std::string::npos) << text;
  std::string all = render(p);
  EXPECT_EQ(text.substr(text.find("LEAK SUMMARY")), all.substr(all.find("LEAK SUMMARY")));
}

}  // namespace
}  // namespace memtrack::report
