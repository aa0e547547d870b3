// The human-readable report, valgrind style: every line starts with "==PID== ". Writes to a
// stream; no other I/O. Deciding on colour (isatty, NO_COLOR) is the caller's job.
#pragma once

#include <ostream>
#include <string>

#include "report/gen_suppressions.h"
#include "report/model.h"

namespace memtrack::report {

struct TextOptions {
  bool color = false;  // ANSI bold red group and error titles, bold LEAK/ERROR SUMMARY lines
  // Under each group and descriptor site: kBlock its suppression block (lines without the
  // "==PID==" prefix, so they can be copied into a file as they are), kLsan
  // "   suppress with: leak:^f$" or a line saying that no leak: pattern singles it out.
  GenSuppressions gen_suppressions = GenSuppressions::kNo;
  std::string version;  // "0.1.0" -> "memtrack 0.1.0: ..." in the header
  // Groups of other kinds are not listed, only totalled in the LEAK SUMMARY.
  LeakKinds show_kinds = kDefaultShownKinds;
  // List at most this many groups per process, largest first (0: all); a line says how many
  // more there are (LeakSanitizer's max_leaks). The LEAK SUMMARY still totals them all.
  size_t max_groups = 0;
  // After the LEAK SUMMARY (or the no-leaks line), one line per suppression entry that matched
  // (-v, LeakSanitizer's print_suppressions):
  //   ==1234== used_suppression:      2 leak:libfoo /src/app.supp:3 (96 bytes in 3 blocks)
  // the count being the groups and descriptors it suppressed.
  bool used_suppressions = false;
  // valgrind memcheck's wording for the lines CI tools parse (memtrack-valgrind, CTest's
  // `ctest -T memcheck`): "N bytes in M blocks are definitely lost in loss record I of N",
  // always "blocks are" as memcheck writes it, and the error titles "Invalid free() /
  // delete / delete[] / realloc()" and "Mismatched free() / delete / delete []", with
  // memtrack's own description on the next line.
  bool valgrind_wording = false;
};

// Every process of the report, one after another (see render_process_text).
void render_text(const Report& report, std::ostream& out, const TextOptions& options);

// One process. With leaks (or shown groups) to list:
//   ==1234== memtrack 0.1.0: ./prog arg1 (pid 1234, parent 1200) exited with status 0
//   ==1234== HEAP SUMMARY: 12 allocations, 6 frees, 8,816 bytes allocated, 4,784 bytes peak
//   ==1234==
//   ==1234== 4,192 (4,096 direct, 96 indirect) bytes in 1 block is definitely lost
//   ==1234==    #0 read_config (examples/leaky.c:37:45) leaky
//   ==1234==
//   ==1234== LEAK SUMMARY:
//   ==1234==    definitely lost: 4,096 bytes in 1 block
//   ==1234==    indirectly lost: 96 bytes in 2 blocks
//   ==1234==      possibly lost: 0 bytes in 0 blocks
//   ==1234==    still reachable: 1,024 bytes in 1 block
//   ==1234==         suppressed: 0 bytes in 0 blocks
//   ==1234==   not shown: / untracked: / note: lines when they apply
// Only groups of options.show_kinds are listed; the LEAK SUMMARY totals every kind. Group
// titles end in "is definitely lost", "indirectly lost", "possibly lost", "still reachable"
// or "unfreed at exit" (unclassified: the runtime did no reachability scan); the
// "(D direct, I indirect)" form appears when indirectly lost blocks hang off the group.
// When no group is classified (a runtime without reachability scan), the LEAK SUMMARY is
// one line, "LEAK SUMMARY: 4,096 bytes in 1 block in 1 group", followed by a "suppressed:"
// line if something was suppressed; a classified summary always has the five lines above
// (plus "unfreed at exit:" if unclassified groups are mixed in).
// Without leaks (no unsuppressed group of a kind other than still reachable), nothing shown
// and no errors, a single line, without the version:
//   ==1234== memtrack: ./prog (pid 1234, parent 1200) exited with status 0: no leaks (12
//   allocations, all freed)
// where the parenthesis says "all freed" only if nothing at all remained, "N bytes still
// reachable" if reachable blocks remained, "N blocks suppressed" if suppressed blocks
// remained, and ends in "; N allocations untracked" if some allocations could not be
// recorded.
// Allocator misuse errors come first, after the header and before the leak groups, one block
// each, valgrind-like (titles: see error_description in text_format.h; ", N times" is added
// when it happened more than once):
//   ==1234== Double free of 0x4a5b040 (100 bytes), 2 times:
//   ==1234==    #0 free_twice (prog.c:12:3) prog
//   ==1234==  the block was freed at:
//   ==1234==    #0 free_once (prog.c:8:3) prog
//   ==1234==  and allocated at:
//   ==1234==    #0 make_block (prog.c:4:13) prog
// The "freed at" and "allocated at" parts appear only when the runtime knew those stacks
// ("the block was allocated at:" without a free stack). After the LEAK SUMMARY block (its
// not shown/untracked/note lines included) comes
//   ==1234== ERROR SUMMARY: 3 errors from 2 contexts
// (occurrences from distinct error records). A process with errors never gets the no-leaks
// line: it gets the full report, whose LEAK SUMMARY is then the one line
// "LEAK SUMMARY: no leaks (12 allocations, all freed)" with the no-leaks line's parenthesis.
// Frames below main are cut (JSON keeps them). The verb follows the block count, as in the
// runtime's own report: "1 block is", "2 blocks are".
// `suggestions`: where --gen-suppressions entries come from (one cache for every process of
// a report); nullptr makes them for this process alone.
void render_process_text(const ProcessReport& process, std::ostream& out,
                         const TextOptions& options, SuggestionCache* suggestions = nullptr);

// One frame without its "#N " prefix, as the text report prints it:
//   read_config (examples/leaky.c:37:45) leaky [inlined]   with debug info
//   read_config (leaky+0x12fb)                             symbol table only
//   ?? (libc.so.6+0x891f5)                                 unknown function
//   ?? (0x7ffaebae11f5)                                    unknown module
std::string format_frame(const Frame& frame);

}  // namespace memtrack::report
