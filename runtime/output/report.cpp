// One leak report, built and sent where it goes: the result directory under memtrack run,
// the log otherwise (report.h). Calls libc (open) but never malloc.
#include "runtime/output/report.h"

#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/leakcheck/leak_scan.h"
#include "runtime/leakcheck/runtime_roots.h"
#include "runtime/output/log_file.h"
#include "runtime/output/process_info.h"
#include "runtime/output/report_text.h"
#include "runtime/output/result_file.h"
#include "runtime/record/heap_check.h"
#include "runtime/record/record.h"
#include "runtime/runtime.h"
#include "runtime/unwind/elf_symbols.h"

namespace memtrack::rt {

namespace {

// Milliseconds with one decimal.
void put_ms(core::TextBuffer& text, uint64_t ns) {
  text.u64(ns / 1000000).chr('.').u64(ns / 100000 % 10).str(" ms");
}

// leak_scan_stats: where the scan's time went, and its working memory.
void print_scan_stats(const LeakScanStats& stats) {
  const uint64_t total = stats.stop_ns + stats.collect_ns + stats.sort_ns + stats.maps_ns +
                         stats.roots_ns + stats.mark_ns + stats.cliques_ns + stats.retention_ns;
  core::FixedText<400> line;
  line.str("leak scan: ").grouped(stats.blocks).plural(stats.blocks, " block").str(" in ");
  put_ms(line, total);
  const struct {
    const char* name;
    uint64_t ns;
  } phases[] = {{"stopping threads", stats.stop_ns}, {"copying", stats.collect_ns},
                {"sorting", stats.sort_ns},          {"mappings", stats.maps_ns},
                {"roots", stats.roots_ns},           {"marking", stats.mark_ns},
                {"cliques", stats.cliques_ns},       {"retainers", stats.retention_ns}};
  line.str(" (");
  for (const auto& phase : phases) {
    if (phase.ns == 0 && phase.name == phases[7].name) continue;  // retainers not asked for
    if (phase.name != phases[0].name) line.str(", ");
    line.str(phase.name).chr(' ');
    put_ms(line, phase.ns);
  }
  line.str("; CPU ");
  put_ms(line, stats.cpu_ns);
  line.str("); ").grouped(stats.bytes).str(" bytes of working memory");
  if (stats.blocks > 0) {
    uint64_t tenths = stats.bytes * 10 / stats.blocks;
    line.str(" (").u64(tenths / 10).chr('.').u64(tenths % 10).str(" per block)");
  }
  diag(line.data());
}

// Classified if the scan can run (and classify_leaks is on), unclassified otherwise.
bool collect(LeakReport& report, uintptr_t stack_top) {
  uint32_t stack_count = g_stacks.size();
  report.set_sampling(g_sampling.interval, &g_sampling.runtime_code, &g_stacks);
  if (g_flags.classify_leaks && g_allocs.size() == 0) {
    // Nothing live, nothing to classify: the scan (stopping every thread, reading the maps,
    // every writable mapping as roots) would find what this finds. A short program that
    // frees everything, or allocates nothing, skips it. A block allocated since is caught
    // here and sends the report down the scan's path after all.
    if (!report.try_collect(g_allocs, stack_count)) return false;
    if (report.groups().size() == 0) return true;
    report.groups().clear();
  }
  if (g_flags.classify_leaks) {
    ScanBlocks blocks;
    ReachabilityScan scan;
    LeakScanStats stats;
    // A block to describe (memtrack snapshot --retainers) needs the graph too.
    const bool describe = report.block().address != 0;
    bool scanned = scan_live_blocks(blocks, scan, stack_top, &stats,
                                    g_flags.retainers || describe ? &report.retention() : nullptr,
                                    describe ? &report.block() : nullptr);
    if (g_flags.leak_scan_stats) print_scan_stats(stats);
    if (scanned) {
      return report.try_collect_classified(blocks, scan.cliques(), stack_count, &scan);
    }
    diag("warning: the leak scan could not run; leaks are reported unclassified");
  }
  return report.try_collect(g_allocs, stack_count);
}

void mark_runtime_internal(LeakReport& report) {
  for (LeakGroup& group : report.groups()) {
    // Blocks the scan found held by the C runtime are marked already.
    if (!group.runtime_internal) {
      group.runtime_internal = is_runtime_internal(g_stacks.get(group.stack_id));
    }
  }
}

// LeakSanitizer's __lsan_is_turned_off(), if the program defines it: nonzero means no leak
// check for this program. The report keeps its errors and descriptors.
bool leak_check_turned_off() {
  using TurnedOff = int (*)();
  auto turned_off = reinterpret_cast<TurnedOff>(find_main_program_function("__lsan_is_turned_off"));
  if (turned_off == nullptr || turned_off() == 0) return false;
  diag("note: the program's __lsan_is_turned_off() returned nonzero: no leak check");
  return true;
}

}  // namespace

bool build_leak_report(LeakReport& report, uintptr_t stack_top) {
  if (!collect(report, stack_top)) return false;
  mark_runtime_internal(report);
  report.sort();
  return true;
}

long produce_report(const char* how, int status, bool have_status, bool final,
                    uintptr_t stack_top) {
  if (silenced()) return 0;
  if (final) check_heap_at_exit();  // their errors belong in the exit's report
  LeakReport report;
  uintptr_t exit_frame = final ? exit_stack(core::sys::current_tid()) : 0;
  if (exit_frame > stack_top) stack_top = exit_frame;
  if (!build_leak_report(report, stack_top)) {
    diag("error: cannot map memory to build the leak report; no report");
    return -1;
  }
  if (leak_check_turned_off()) report.groups().clear();
  long lost = 0;
  for (const LeakGroup& g : report.groups()) {
    if (!g.runtime_internal && g.kind != LeakKind::kReachable) lost += static_cast<long>(g.bytes);
  }
  // Under memtrack run every report goes to the CLI, which renders it where the user asked.
  if (g_flags.result_dir[0] != '\0') {
    static uint32_t checks = 0;  // under the report lock
    if (final) {
      write_result_file(g_flags.result_dir, report);
    } else {
      write_check_file(g_flags.result_dir, report, ++checks);
    }
    return lost;
  }
  core::FixedText<64> ending;
  ending.str(how);
  if (have_status) ending.str(" with status ").i64(status);
  int fd = open_log_fd();
  {
    core::FdWriter out(fd);
    write_text_report(out, report, ending.data());
  }
  if (fd != 2) core::sys::close_fd(fd);
  return lost;
}

}  // namespace memtrack::rt
