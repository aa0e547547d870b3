// Text report sections beyond the leak groups: --gen-suppressions blocks, the crash section
// and the header of an on-demand check.
#include <gtest/gtest.h>

#include "report/test_fixtures.h"
#include "report/text_render_testing.h"
#include "report/text_renderer.h"

namespace memtrack::report {
namespace {

using testing::render;
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

}  // namespace
}  // namespace memtrack::report
