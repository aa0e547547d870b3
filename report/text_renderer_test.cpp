// Golden tests for the text report: exact output with and without suppression entries and
// colour, singular/plural, the no-leaks line, exit phrases and the cut below main.
#include "report/text_renderer.h"

#include <gtest/gtest.h>

#include "report/test_fixtures.h"
#include "report/text_render_testing.h"

namespace memtrack::report {
namespace {

using testing::debug_frame;
using testing::group;
using testing::quiet_process;
using testing::render;
using testing::sample_process;
using testing::sample_report;
using testing::symbol_frame;
using testing::with_version;

// The header of sample_process() and its error blocks (testing::sample_errors()).
constexpr const char* kSampleHeaderAndErrors =
    "==1234== memtrack 0.1.0: ./prog arg1 (pid 1234, parent 1200) exited with status 0\n"
    "==1234== HEAP SUMMARY: 15 allocations, 6 frees, 8,816 bytes allocated, 6,240 bytes peak\n"
    "==1234==\n"
    "==1234== Double free of 0x4a5b040 (100 bytes), 2 times:\n"
    "==1234==    #0 free_twice (examples/misuse.c:12:3) leaky\n"
    "==1234==    #1 main (examples/misuse.c:30:3) leaky\n"
    "==1234==  the block was freed at:\n"
    "==1234==    #0 free_once (examples/misuse.c:8:3) leaky\n"
    "==1234==    #1 main (examples/misuse.c:29:3) leaky\n"
    "==1234==  and allocated at:\n"
    "==1234==    #0 make_block (examples/misuse.c:4:13) leaky\n"
    "==1234==    #1 main (examples/misuse.c:28:20) leaky\n"
    "==1234==\n"
    "==1234== Invalid free of 0x7fffffffe0c0: it points to the stack:\n"
    "==1234==    #0 free_pointer (examples/misuse.c:16:3) leaky\n"
    "==1234==\n"
    "==1234== Mismatched free: a block from aligned new released with delete:\n"
    "==1234==    #0 release(Big*) (examples/misuse.cpp:22:3) leaky\n"
    "==1234==  the block was allocated at:\n"
    "==1234==    #0 make_big() (examples/misuse.cpp:17:10) leaky\n"
    "==1234==\n";

const std::string kSampleText =
    std::string(kSampleHeaderAndErrors) +
    "==1234== 4,192 (4,096 direct, 96 indirect) bytes in 1 block is definitely lost\n"
    "==1234==    #0 read_config (examples/leaky.c:37:45) leaky\n"
    "==1234==    #1 inline_helper (examples/leaky.c:30:3) leaky [inlined]\n"
    "==1234==    #2 main (examples/leaky.c:55:18) leaky\n"
    "==1234==\n"
    "==1234== 144 bytes in 3 blocks are possibly lost\n"
    "==1234==    #0 open_session(int, char const*) (examples/leaky.c:21) leaky\n"
    "==1234==    #1 accept_clients (examples/leaky.c:44:5) leaky\n"
    "==1234==\n"
    "==1234== 96 bytes in 2 blocks are indirectly lost\n"
    "==1234==    #0 worker (leaky+0x11ce)\n"
    "==1234==    #1 ?? (libc.so.6+0x891f5)\n"
    "==1234==    #2 ?? (0x7ffff7ebd8ec)\n"
    "==1234==\n"
    "==1234== LEAK SUMMARY:\n"
    "==1234==    definitely lost: 4,096 bytes in 1 block\n"
    "==1234==    indirectly lost: 96 bytes in 2 blocks\n"
    "==1234==      possibly lost: 144 bytes in 3 blocks\n"
    "==1234==    still reachable: 1,024 bytes in 1 block\n"
    "==1234==         suppressed: 100 bytes in 1 block\n"
    "==1234==   not shown: 288 bytes in 1 block kept by the C/C++ runtime for its own use\n"
    "==1234==   untracked: 5 allocations (400 bytes) could not be recorded (memtrack's tables "
    "were full)\n"
    "==1234==   note: no debug info for /lib/x86_64-linux-gnu/libc.so.6: its frames show "
    "function names only\n"
    "==1234== ERROR SUMMARY: 4 errors from 3 contexts\n";

TEST(TextRenderer, GoldenSample) {
  EXPECT_EQ(render(sample_report(), with_version()), kSampleText);
}

TEST(TextRenderer, GoldenSampleWithSuppressionEntries) {
  TextOptions options = with_version();
  options.gen_suppressions = GenSuppressions::kLsan;
  EXPECT_EQ(render(sample_report(), options),
            std::string(kSampleHeaderAndErrors) +
                "==1234== 4,192 (4,096 direct, 96 indirect) bytes in 1 block is definitely lost\n"
                "==1234==    #0 read_config (examples/leaky.c:37:45) leaky\n"
                "==1234==    #1 inline_helper (examples/leaky.c:30:3) leaky [inlined]\n"
                "==1234==    #2 main (examples/leaky.c:55:18) leaky\n"
                "==1234==    suppress with: leak:^read_config$\n"
                "==1234==\n"
                "==1234== 144 bytes in 3 blocks are possibly lost\n"
                "==1234==    #0 open_session(int, char const*) (examples/leaky.c:21) leaky\n"
                "==1234==    #1 accept_clients (examples/leaky.c:44:5) leaky\n"
                "==1234==    suppress with: leak:^open_session(int, char const*)$\n"
                "==1234==\n"
                "==1234== 96 bytes in 2 blocks are indirectly lost\n"
                "==1234==    #0 worker (leaky+0x11ce)\n"
                "==1234==    #1 ?? (libc.so.6+0x891f5)\n"
                "==1234==    #2 ?? (0x7ffff7ebd8ec)\n"
                "==1234==    suppress with: leak:^worker$\n"
                "==1234==\n"
                "==1234== LEAK SUMMARY:\n"
                "==1234==    definitely lost: 4,096 bytes in 1 block\n"
                "==1234==    indirectly lost: 96 bytes in 2 blocks\n"
                "==1234==      possibly lost: 144 bytes in 3 blocks\n"
                "==1234==    still reachable: 1,024 bytes in 1 block\n"
                "==1234==         suppressed: 100 bytes in 1 block\n"
                "==1234==   not shown: 288 bytes in 1 block kept by the C/C++ runtime for its own "
                "use\n"
                "==1234==   untracked: 5 allocations (400 bytes) could not be recorded "
                "(memtrack's tables were full)\n"
                "==1234==   note: no debug info for /lib/x86_64-linux-gnu/libc.so.6: its frames "
                "show function names only\n"
                "==1234== ERROR SUMMARY: 4 errors from 3 contexts\n");
}

TEST(TextRenderer, ShowKindsSelectsTheListedGroupsOnly) {
  TextOptions options = with_version();
  options.show_kinds = LeakKinds::all();
  std::string all = render(sample_report(), options);
  // The still reachable group takes its place by size; the summary does not change.
  EXPECT_NE(all.find("==1234==    #2 main (examples/leaky.c:55:18) leaky\n"
                     "==1234==\n"
                     "==1234== 1,024 bytes in 1 block is still reachable\n"
                     "==1234==    #0 init_cache (examples/leaky.c:62:11) leaky\n"
                     "==1234==\n"
                     "==1234== 144 bytes in 3 blocks are possibly lost\n"),
            std::string::npos)
      << all;
  std::string summary = kSampleText.substr(kSampleText.find("==1234== LEAK"));
  EXPECT_TRUE(all.ends_with(summary)) << all;

  // Errors do not depend on the kinds shown.
  options.show_kinds = LeakKinds{LeakKind::kPossible};
  EXPECT_EQ(
      render(sample_report(), options),
      kSampleHeaderAndErrors +
          std::string("==1234== 144 bytes in 3 blocks are possibly lost\n"
                      "==1234==    #0 open_session(int, char const*) (examples/leaky.c:21) leaky\n"
                      "==1234==    #1 accept_clients (examples/leaky.c:44:5) leaky\n"
                      "==1234==\n") +
          summary);

  // Nothing listed, but there are leaks: the header and the summary still say so.
  options.show_kinds = LeakKinds{};
  EXPECT_EQ(render(sample_report(), options), kSampleHeaderAndErrors + summary);
}

TEST(TextRenderer, ColourOnlyOnGroupTitlesAndLeakSummary) {
  ProcessReport p = sample_process();
  p.errors.clear();
  p.leaks.resize(1);
  p.leaks[0].kind = LeakKind::kUnclassified;
  p.leaks[0].indirect_bytes = 0;
  p.leaks[0].indirect_blocks = 0;
  p.suppressed.clear();
  p.summary = Summary{};
  p.summary.of_kind(LeakKind::kUnclassified) = {4096, 1};
  p.notes.clear();
  TextOptions options = with_version();
  options.color = true;
  EXPECT_EQ(render(p, options),
            "==1234== memtrack 0.1.0: ./prog arg1 (pid 1234, parent 1200) exited with status 0\n"
            "==1234== HEAP SUMMARY: 0 allocations, 0 frees, 0 bytes allocated, 0 bytes peak\n"
            "==1234==\n"
            "==1234== \033[1;31m4,096 bytes in 1 block is unfreed at exit\033[0m\n"
            "==1234==    #0 read_config (examples/leaky.c:37:45) leaky\n"
            "==1234==    #1 inline_helper (examples/leaky.c:30:3) leaky [inlined]\n"
            "==1234==    #2 main (examples/leaky.c:55:18) leaky\n"
            "==1234==\n"
            "==1234== \033[1mLEAK SUMMARY: 4,096 bytes in 1 block in 1 group\033[0m\n");
  // The classified summary: only its first line is bold.
  p = sample_process();
  p.errors.clear();
  p.summary.errors = p.summary.error_occurrences = 0;
  p.leaks.resize(1);
  p.notes.clear();
  std::string text = render(p, options);
  EXPECT_NE(text.find("==1234== \033[1;31m4,192 (4,096 direct, 96 indirect) bytes in 1 block is "
                      "definitely lost\033[0m\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("==1234== \033[1mLEAK SUMMARY:\033[0m\n"
                      "==1234==    definitely lost: 4,096 bytes in 1 block\n"),
            std::string::npos)
      << text;
}

TEST(TextRenderer, NoEscapeCodesWithoutColour) {
  std::string text = render(sample_report(), with_version());
  EXPECT_EQ(text.find('\033'), std::string::npos);
}

TEST(TextRenderer, SingularAndPlural) {
  ProcessReport p = quiet_process();
  p.summary.allocations = 1;
  p.summary.frees = 1;
  p.summary.bytes_allocated = 1;
  p.summary.peak_bytes = 1;
  p.leaks = {group(LeakKind::kReachable, 1, 1), group(LeakKind::kIndirect, 0, 2),
             group(LeakKind::kDefinite, 2, 1), group(LeakKind::kPossible, 1000, 1000)};
  Summary& s = p.summary;
  s.of_kind(LeakKind::kDefinite).bytes = 2;
  s.of_kind(LeakKind::kDefinite).blocks = 1;
  s.of_kind(LeakKind::kIndirect).bytes = 0;
  s.of_kind(LeakKind::kIndirect).blocks = 2;
  s.of_kind(LeakKind::kPossible).bytes = 1000;
  s.of_kind(LeakKind::kPossible).blocks = 1000;
  s.of_kind(LeakKind::kReachable).bytes = 1;
  s.of_kind(LeakKind::kReachable).blocks = 1;
  s.suppressed.bytes = 1;
  s.suppressed.blocks = 1;
  s.runtime_internal.bytes = 2;
  s.runtime_internal.blocks = 2;
  s.untracked_allocations = 1;
  s.untracked_bytes = 1;
  TextOptions options;
  options.show_kinds = LeakKinds::all();
  EXPECT_EQ(render(p, options),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 1 allocation, 1 free, 1 byte allocated, 1 byte peak\n"
            "==77==\n"
            "==77== 1 byte in 1 block is still reachable\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== 0 bytes in 2 blocks are indirectly lost\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== 2 bytes in 1 block is definitely lost\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== 1,000 bytes in 1,000 blocks are possibly lost\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== LEAK SUMMARY:\n"
            "==77==    definitely lost: 2 bytes in 1 block\n"
            "==77==    indirectly lost: 0 bytes in 2 blocks\n"
            "==77==      possibly lost: 1,000 bytes in 1,000 blocks\n"
            "==77==    still reachable: 1 byte in 1 block\n"
            "==77==         suppressed: 1 byte in 1 block\n"
            "==77==   not shown: 2 bytes in 2 blocks kept by the C/C++ runtime for its own use\n"
            "==77==   untracked: 1 allocation (1 byte) could not be recorded (memtrack's tables "
            "were full)\n");
}

TEST(TextRenderer, IndirectTitleAndAllKindsAtZero) {
  ProcessReport p = quiet_process();
  LeakGroup head = group(LeakKind::kDefinite, 16, 2);
  head.indirect_bytes = 1008;
  head.indirect_blocks = 63;
  // Indirect blocks of 0 bytes (malloc(0)) keep the plain form, as in memcheck.
  LeakGroup empty_indirect = group(LeakKind::kDefinite, 8, 1);
  empty_indirect.indirect_blocks = 1;
  p.leaks = {head, empty_indirect};
  p.summary.of_kind(LeakKind::kDefinite).bytes = 24;
  p.summary.of_kind(LeakKind::kDefinite).blocks = 3;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== 1,024 (16 direct, 1,008 indirect) bytes in 2 blocks are definitely lost\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== 8 bytes in 1 block is definitely lost\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== LEAK SUMMARY:\n"
            "==77==    definitely lost: 24 bytes in 3 blocks\n"
            "==77==    indirectly lost: 0 bytes in 0 blocks\n"
            "==77==      possibly lost: 0 bytes in 0 blocks\n"
            "==77==    still reachable: 0 bytes in 0 blocks\n"
            "==77==         suppressed: 0 bytes in 0 blocks\n");
}

TEST(TextRenderer, UnclassifiedGroupsMixedWithClassifiedOnes) {
  ProcessReport p = quiet_process();
  p.leaks = {group(LeakKind::kUnclassified, 40, 4), group(LeakKind::kPossible, 8, 1)};
  p.summary.of_kind(LeakKind::kUnclassified) = {40, 4};
  p.summary.of_kind(LeakKind::kPossible).bytes = 8;
  p.summary.of_kind(LeakKind::kPossible).blocks = 1;
  std::string text = render(p);
  EXPECT_NE(text.find("==77== 40 bytes in 4 blocks are unfreed at exit\n"), std::string::npos);
  EXPECT_TRUE(
      text.ends_with("==77== LEAK SUMMARY:\n"
                     "==77==    definitely lost: 0 bytes in 0 blocks\n"
                     "==77==    indirectly lost: 0 bytes in 0 blocks\n"
                     "==77==      possibly lost: 8 bytes in 1 block\n"
                     "==77==    still reachable: 0 bytes in 0 blocks\n"
                     "==77==    unfreed at exit: 40 bytes in 4 blocks\n"
                     "==77==         suppressed: 0 bytes in 0 blocks\n"))
      << text;
  // The option alone decides what is listed (the CLI always adds unclassified to it).
  TextOptions options;
  options.show_kinds = LeakKinds{LeakKind::kPossible};
  EXPECT_EQ(render(p, options).find("unfreed at exit\n"), std::string::npos);
}

TEST(TextRenderer, ClassifiedSummaryAlsoWhenOnlySuppressedGroupsAreClassified) {
  ProcessReport p = quiet_process();
  p.leaks = {group(LeakKind::kIndirect, 32, 2)};
  p.suppressed = {group(LeakKind::kDefinite, 16, 1)};
  p.summary.of_kind(LeakKind::kIndirect).bytes = 32;
  p.summary.of_kind(LeakKind::kIndirect).blocks = 2;
  p.summary.suppressed.bytes = 16;
  p.summary.suppressed.blocks = 1;
  std::string text = render(p);
  EXPECT_TRUE(
      text.ends_with("==77==    indirectly lost: 32 bytes in 2 blocks\n"
                     "==77==      possibly lost: 0 bytes in 0 blocks\n"
                     "==77==    still reachable: 0 bytes in 0 blocks\n"
                     "==77==         suppressed: 16 bytes in 1 block\n"))
      << text;
}

// What the runtime could not see qualifies even the one line of a process with no leaks;
// the symbolizer's notes do not belong there.
TEST(TextRenderer, NoLeaksLineKeepsTheRuntimesNotes) {
  ProcessReport p = quiet_process();
  p.notes = {"the program defines malloc itself: the blocks are not seen",
             "no debug info for /lib/libc.so.6"};
  p.runtime_notes = 1;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations, all freed)\n"
            "==77==   note: the program defines malloc itself: the blocks are not seen\n");
}

TEST(TextRenderer, StillReachableAloneIsNoLeak) {
  ProcessReport p = quiet_process();
  p.leaks = {group(LeakKind::kReachable, 1024, 1), group(LeakKind::kReachable, 1, 1)};
  p.summary.of_kind(LeakKind::kReachable).bytes = 1025;
  p.summary.of_kind(LeakKind::kReachable).blocks = 2;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations, 1,025 bytes still reachable)\n");
  p.summary.suppressed.bytes = 7;
  p.summary.suppressed.blocks = 1;
  p.summary.untracked_allocations = 2;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations, 1,025 bytes still reachable, 1 block suppressed; 2 allocations "
            "untracked)\n");
  // Asked for, the reachable groups get the full report.
  TextOptions options;
  options.show_kinds = LeakKinds::all();
  EXPECT_EQ(render(p, options),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== 1,024 bytes in 1 block is still reachable\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== 1 byte in 1 block is still reachable\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== LEAK SUMMARY:\n"
            "==77==    definitely lost: 0 bytes in 0 blocks\n"
            "==77==    indirectly lost: 0 bytes in 0 blocks\n"
            "==77==      possibly lost: 0 bytes in 0 blocks\n"
            "==77==    still reachable: 1,025 bytes in 2 blocks\n"
            "==77==         suppressed: 7 bytes in 1 block\n"
            "==77==   untracked: 2 allocations (0 bytes) could not be recorded (memtrack's "
            "tables were full)\n");
}

TEST(TextRenderer, HiddenLeaksStillGiveTheFullReport) {
  ProcessReport p = quiet_process();
  p.leaks = {group(LeakKind::kIndirect, 32, 2)};
  p.summary.of_kind(LeakKind::kIndirect).bytes = 32;
  p.summary.of_kind(LeakKind::kIndirect).blocks = 2;
  TextOptions options;
  options.show_kinds = LeakKinds{LeakKind::kDefinite};
  EXPECT_EQ(render(p, options),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== LEAK SUMMARY:\n"
            "==77==    definitely lost: 0 bytes in 0 blocks\n"
            "==77==    indirectly lost: 32 bytes in 2 blocks\n"
            "==77==      possibly lost: 0 bytes in 0 blocks\n"
            "==77==    still reachable: 0 bytes in 0 blocks\n"
            "==77==         suppressed: 0 bytes in 0 blocks\n");
}

TEST(TextRenderer, OneGroupAndNoOptionalSummaryLines) {
  ProcessReport p = quiet_process();
  p.leaks = {group(LeakKind::kUnclassified, 24, 1)};
  p.summary.of_kind(LeakKind::kUnclassified) = {24, 1};
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== 24 bytes in 1 block is unfreed at exit\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== LEAK SUMMARY: 24 bytes in 1 block in 1 group\n");
}

TEST(TextRenderer, NoLeaksOneLiner) {
  ProcessReport p = quiet_process();
  p.summary.allocations = 1234;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (1,234 "
            "allocations, all freed)\n");
  p.summary.allocations = 1;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (1 "
            "allocation, all freed)\n");
}

TEST(TextRenderer, AttachedSaysSinceWhenAndWhatItCannotSee) {
  ProcessReport p = quiet_process();
  p.summary.attached_ms = 12345;
  p.summary.preexisting_bytes = 5234567;
  p.summary.preexisting_frees = 1234;
  p.summary.preexisting_freed_bytes = 98765;
  p.leaks = {group(LeakKind::kUnclassified, 24, 1)};
  p.summary.of_kind(LeakKind::kUnclassified) = {24, 1};
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77== ATTACHED 12.3 s ago (memtrack attach): the 5,234,567 bytes in use before are "
            "not tracked; 1,234 blocks of them (98,765 bytes) freed since\n"
            "==77==\n"
            "==77== 24 bytes in 1 block is unfreed at exit\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== LEAK SUMMARY: 24 bytes in 1 block in 1 group\n");
  // Another allocator than glibc's: mallinfo2 does not know its blocks.
  p.summary.preexisting_bytes = 0;
  p.summary.preexisting_frees = 1;
  p.summary.preexisting_freed_bytes = 16;
  EXPECT_NE(render(p).find("==77== ATTACHED 12.3 s ago (memtrack attach): blocks from before are "
                           "not tracked (their bytes are not known: the program's allocator is "
                           "not glibc's); 1 block of them (16 bytes) freed since\n"),
            std::string::npos);
  p.leaks.clear();
  p.summary.of_kind(LeakKind::kUnclassified) = {0, 0};
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations, all freed; attached 12.3 s ago, older blocks not tracked)\n");
}

TEST(TextRenderer, NoLeaksButSuppressedOrRuntimeInternal) {
  ProcessReport p = quiet_process();
  p.summary.runtime_internal.bytes = 288;
  p.summary.runtime_internal.blocks = 1;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations)\n");
  p.summary.suppressed.bytes = 50;
  p.summary.suppressed.blocks = 2;
  p.suppressed = {group(LeakKind::kDefinite, 50, 2)};
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations, 2 blocks suppressed)\n");
  p.summary.suppressed.blocks = 1;
  p.summary.untracked_allocations = 4;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations, 1 block suppressed; 4 allocations untracked)\n");
}

TEST(TextRenderer, ExitPhrasesInHeaderAndOneLiner) {
  ProcessReport p = quiet_process();
  p.exit.how = ExitInfo::How::kSignal;
  p.exit.signal = 11;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) was killed by signal 11 (SIGSEGV): no "
            "leaks (3 allocations, all freed)\n");
  p.exit.how = ExitInfo::How::kUnderscoreExit;
  p.exit.code = 3;
  p.leaks = {group(LeakKind::kUnclassified, 8, 1)};
  std::string text = render(p, with_version());
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "==77== memtrack 0.1.0: ./prog (pid 77, parent 1) called _exit(3)");
  p.exit.how = ExitInfo::How::kUnknown;
  text = render(p, with_version());
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "==77== memtrack 0.1.0: ./prog (pid 77, parent 1) exit status unknown");
}

TEST(TextRenderer, CutsBelowMainColdAndShowsEmptyStacks) {
  ProcessReport p = quiet_process();
  LeakGroup g = group(LeakKind::kDefinite, 8, 1);
  g.stack = {symbol_frame(0x1, "/bin/app", 0x10, "main.cold"),
             symbol_frame(0x2, testing::kLibc, 0x20, "__libc_start_main")};
  LeakGroup no_stack = group(LeakKind::kDefinite, 4, 1);
  no_stack.stack.clear();
  p.leaks = {g, no_stack};
  p.summary.of_kind(LeakKind::kDefinite).bytes = 12;
  p.summary.of_kind(LeakKind::kDefinite).blocks = 2;
  TextOptions options;
  options.gen_suppressions = GenSuppressions::kLsan;
  EXPECT_EQ(render(p, options),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== 8 bytes in 1 block is definitely lost\n"
            "==77==    #0 main.cold (app+0x10)\n"
            "==77==    no leak: pattern singles this out (--gen-suppressions=yes prints a "
            "block)\n"
            "==77==\n"
            "==77== 4 bytes in 1 block is definitely lost\n"
            "==77==    (no stack recorded)\n"
            "==77==\n"
            "==77== LEAK SUMMARY:\n"
            "==77==    definitely lost: 12 bytes in 2 blocks\n"
            "==77==    indirectly lost: 0 bytes in 0 blocks\n"
            "==77==      possibly lost: 0 bytes in 0 blocks\n"
            "==77==    still reachable: 0 bytes in 0 blocks\n"
            "==77==         suppressed: 0 bytes in 0 blocks\n");
}

TEST(TextRenderer, CommandIsQuotedAndControlCharactersNeutralized) {
  ProcessReport p = quiet_process();
  p.command = {"./my prog", "it's"};
  LeakGroup g = group(LeakKind::kDefinite, 8, 1);
  g.stack[0].function = "evil\n==77== fake\033[31m";
  p.leaks = {g};
  std::string text = render(p);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "==77== memtrack: './my prog' 'it'\\''s' (pid 77, parent 1) exited with status 0");
  EXPECT_NE(text.find("==77==    #0 evil?==77== fake?[31m (f.c:1:2) leaky\n"), std::string::npos);
}

ErrorReport error(ErrorKind kind, uint64_t occurrences) {
  ErrorReport e;
  e.kind = kind;
  e.occurrences = occurrences;
  e.address = 0x4a5b040;
  e.block_start = 0x4a5b040;
  e.block_size = 1;
  e.alloc_call = AllocCall::kMalloc;
  e.stack = {debug_frame(0x555555555100, "bad", "b.c", 7, 3)};
  return e;
}

TEST(TextRenderer, ErrorsWithoutLeaksGetTheFullReport) {
  ProcessReport p = quiet_process();
  p.errors = {error(ErrorKind::kReallocAfterFree, 1)};
  p.errors[0].free_call = FreeCall::kRealloc;
  p.summary.errors = 1;
  p.summary.error_occurrences = 1;
  EXPECT_EQ(render(p, with_version()),
            "==77== memtrack 0.1.0: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== realloc of freed pointer 0x4a5b040 (1 byte):\n"
            "==77==    #0 bad (b.c:7:3) leaky\n"
            "==77==\n"
            "==77== LEAK SUMMARY: no leaks (3 allocations, all freed)\n"
            "==77== ERROR SUMMARY: 1 error from 1 context\n");
  // The no-leaks parenthesis keeps its details; notes still follow.
  p.leaks = {group(LeakKind::kReachable, 1024, 1)};
  p.summary.of_kind(LeakKind::kReachable).bytes = 1024;
  p.summary.of_kind(LeakKind::kReachable).blocks = 1;
  p.summary.untracked_allocations = 2;
  p.summary.runtime_internal.blocks = 1;
  p.notes = {"a note"};
  std::string text = render(p);
  EXPECT_TRUE(
      text.ends_with("==77==\n"
                     "==77== LEAK SUMMARY: no leaks (3 allocations, 1,024 bytes still reachable; 2 "
                     "allocations untracked)\n"
                     "==77==   note: a note\n"
                     "==77== ERROR SUMMARY: 1 error from 1 context\n"))
      << text;
}

TEST(TextRenderer, ErrorsComeBeforeLeakGroupsAndTheirSummaryAfterTheLeakSummary) {
  ProcessReport p = quiet_process();
  p.leaks = {group(LeakKind::kUnclassified, 24, 1)};
  p.summary.of_kind(LeakKind::kUnclassified) = {24, 1};
  p.errors = {error(ErrorKind::kDoubleFree, 1000), error(ErrorKind::kInvalidFree, 2)};
  p.errors[1].where = ErrorWhere::kHeap;
  p.errors[1].address = 0x4a5b041;
  p.errors[1].block_size = 2;
  p.errors[1].alloc_stack = {debug_frame(0x555555555200, "make", "m.c", 2, 9)};
  p.summary.errors = 2;
  p.summary.error_occurrences = 1002;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== Double free of 0x4a5b040 (1 byte), 1,000 times:\n"
            "==77==    #0 bad (b.c:7:3) leaky\n"
            "==77==\n"
            "==77== Invalid free of 0x4a5b041, 1 byte inside a block of 2 bytes, 2 times:\n"
            "==77==    #0 bad (b.c:7:3) leaky\n"
            "==77==  the block was allocated at:\n"
            "==77==    #0 make (m.c:2:9) leaky\n"
            "==77==\n"
            "==77== 24 bytes in 1 block is unfreed at exit\n"
            "==77==    #0 f (f.c:1:2) leaky\n"
            "==77==\n"
            "==77== LEAK SUMMARY: 24 bytes in 1 block in 1 group\n"
            "==77== ERROR SUMMARY: 1,002 errors from 2 contexts\n");
}

TEST(TextRenderer, ErrorStacksAreCutBelowMainAndMayBeMissing) {
  ProcessReport p = quiet_process();
  ErrorReport e = error(ErrorKind::kDoubleFree, 1);
  Frame start = symbol_frame(0x2, testing::kLibc, 0x20, "__libc_start_main");
  e.stack = {};  // a bad stack of depth 0
  e.free_stack = {symbol_frame(0x1, "/bin/app", 0x10, "main"), start};
  e.alloc_stack = {debug_frame(0x3, "g", "g.c", 1, 0), debug_frame(0x4, "main.cold", "g.c", 9, 0),
                   start};
  p.errors = {e};
  p.summary.errors = 1;
  p.summary.error_occurrences = 1;
  TextOptions options;
  options.gen_suppressions = GenSuppressions::kBlock;  // only for leak groups
  EXPECT_EQ(render(p, options),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== Double free of 0x4a5b040 (1 byte):\n"
            "==77==    (no stack recorded)\n"
            "==77==  the block was freed at:\n"
            "==77==    #0 main (app+0x10)\n"
            "==77==  and allocated at:\n"
            "==77==    #0 g (g.c:1) leaky\n"
            "==77==    #1 main.cold (g.c:9) leaky\n"
            "==77==\n"
            "==77== LEAK SUMMARY: no leaks (3 allocations, all freed)\n"
            "==77== ERROR SUMMARY: 1 error from 1 context\n");
}

TEST(TextRenderer, ColourOnErrorTitlesAndErrorSummary) {
  ProcessReport p = quiet_process();
  p.errors = {error(ErrorKind::kMismatchedFree, 1)};
  p.errors[0].alloc_call = AllocCall::kNewArray;
  p.errors[0].free_call = FreeCall::kDelete;
  p.errors[0].stack[0].function = "evil\n\033[31m";
  p.summary.errors = 1;
  p.summary.error_occurrences = 1;
  TextOptions options;
  options.color = true;
  EXPECT_EQ(render(p, options),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== \033[1;31mMismatched free: a block from new[] released with delete:\033[0m\n"
            "==77==    #0 evil??[31m (b.c:7:3) leaky\n"
            "==77==\n"
            "==77== \033[1mLEAK SUMMARY: no leaks (3 allocations, all freed)\033[0m\n"
            "==77== \033[1mERROR SUMMARY: 1 error from 1 context\033[0m\n");
}

TEST(TextRenderer, FormatFrame) {
  Frame f = debug_frame(0x555555555100, "f", "f.c", 12, 0);
  EXPECT_EQ(format_frame(f), "f (f.c:12) leaky");
  f.line = 0;
  EXPECT_EQ(format_frame(f), "f (f.c) leaky");
  f.module.clear();
  f.inlined = true;
  EXPECT_EQ(format_frame(f), "f (f.c) [inlined]");
  f.function.clear();
  EXPECT_EQ(format_frame(f), "?? (f.c) [inlined]");
  EXPECT_EQ(format_frame(symbol_frame(0xabc, "/lib/libz.so.1", 0x1f, "")), "?? (libz.so.1+0x1f)");
  EXPECT_EQ(format_frame(symbol_frame(0xabc, "", 0, "")), "?? (0xabc)");
  EXPECT_EQ(format_frame(symbol_frame(0xabc, "", 0, "jit_fn")), "jit_fn (0xabc)");
}

TEST(TextRenderer, SeveralProcessesInOrder) {
  Report r;
  r.processes = {quiet_process(), quiet_process()};
  r.processes[1].pid = 78;
  r.processes[1].ppid = 77;
  EXPECT_EQ(render(r, TextOptions{}),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations, all freed)\n"
            "==78== memtrack: ./prog (pid 78, parent 77) exited with status 0: no leaks (3 "
            "allocations, all freed)\n");
}

}  // namespace
}  // namespace memtrack::report

namespace memtrack::report {
namespace {

// memtrack-valgrind's wording, as CTest's valgrind parser matches it (its regular
// expressions: "[0-9,]+ bytes in [0-9,]+ blocks are definitely lost in loss record [0-9,]+ of
// [0-9,]+", "Invalid free() / delete / delete[]", "Mismatched free() / delete / delete []").
TEST(TextRenderer, ValgrindWordingForCTest) {
  TextOptions options;
  options.valgrind_wording = true;
  options.show_kinds = LeakKinds::all();
  std::string text = render(sample_report(), options);
  EXPECT_NE(text.find("==1234== 4,192 (4,096 direct, 96 indirect) bytes in 1 blocks are "
                      "definitely lost in loss record 1 of 4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("==1234== 144 bytes in 3 blocks are possibly lost in loss record 3 of 4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("==1234== Invalid free() / delete / delete[] / realloc()\n"
                      "==1234==  (Double free of 0x4a5b040 (100 bytes), 2 times), at:\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("==1234== Mismatched free() / delete / delete []\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find(" block is "), std::string::npos) << text;
}

}  // namespace
}  // namespace memtrack::report
