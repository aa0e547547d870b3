// The end of the program: the exit report from the library destructor (after the program's
// atexit handlers and static destructors) and from _exit/_Exit, which skip both.
// Calls libc (open, dladdr via the renderer) but never malloc.
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/spin_lock.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/leakcheck/guarded_read.h"
#include "runtime/leakcheck/leak_report.h"
#include "runtime/leakcheck/leak_scan.h"
#include "runtime/live/live_thread.h"
#include "runtime/output/process_info.h"
#include "runtime/output/report_text.h"
#include "runtime/output/result_file.h"
#include "runtime/output/trace_log.h"
#include "runtime/runtime.h"

namespace memtrack::rt {

// Expands %p to the pid; "%%" is a literal '%'.
void expand_log_path(const char* pattern, core::TextBuffer& path) {
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (p[0] == '%' && p[1] == 'p') {
      path.i64(core::sys::current_pid());
      ++p;
    } else if (p[0] == '%' && p[1] == '%') {
      path.chr('%');
      ++p;
    } else {
      path.chr(*p);
    }
  }
}
namespace {

std::atomic<bool> g_reported{false};

}  // namespace

// Live reports go to the log as they come, so with them the exit report appends too.
int open_log_fd() {
  if (g_flags.log_file[0] == '\0') return 2;
  core::FixedText<core::kMaxFlagStringLength + 32> path;
  expand_log_path(g_flags.log_file, path);
  int fd = g_flags.expire_ms > 0 ? core::sys::open_for_append(path.data())
                                 : core::sys::open_for_write(path.data());
  if (fd < 0) {
    core::FixedText<512> message;
    message.str("warning: cannot open log_file '").str(path.data()).str("' (errno ");
    message.i64(errno).str("); writing the report to stderr");
    diag(message.data());
    return 2;
  }
  return fd;
}

namespace {

// Classified if the scan can run (and classify_leaks is on), unclassified otherwise.
bool collect(LeakReport& report, uintptr_t stack_top) {
  uint32_t stack_count = g_stacks.size();
  if (g_flags.classify_leaks) {
    core::MmapArray<ScanBlock> blocks;
    if (scan_live_blocks(blocks, stack_top)) {
      return report.try_collect_classified(blocks, stack_count);
    }
    diag("warning: the leak scan could not run; leaks are reported unclassified");
  }
  return report.try_collect(g_allocs, stack_count);
}

void mark_runtime_internal(LeakReport& report) {
  for (LeakGroup& group : report.groups()) {
    group.runtime_internal = is_runtime_internal(g_stacks.get(group.stack_id));
  }
}

}  // namespace

bool build_leak_report(LeakReport& report, uintptr_t stack_top) {
  if (!collect(report, stack_top)) return false;
  mark_runtime_internal(report);
  report.sort();
  return true;
}

// Builds and writes one report. `final`: the process is ending (result file for the CLI);
// otherwise an on-demand check, always as text. Returns the lost bytes found, or -1.
long produce_report(const char* how, int status, bool have_status, bool final,
                    uintptr_t stack_top) {
  LeakReport report;
  uintptr_t exit_frame = final ? exit_stack(core::sys::current_tid()) : 0;
  if (exit_frame > stack_top) stack_top = exit_frame;
  if (!build_leak_report(report, stack_top)) {
    diag("error: cannot map memory to build the leak report; no report");
    return -1;
  }
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

void report_at_exit(const char* how, int status, bool have_status) {
  if (!initialized()) return;
  trace_log_flush_final();  // every path that ends the process comes here first
  if (!g_flags.report_at_exit) {
    report_unwinder_check();
    return;
  }
  if (g_reported.exchange(true)) return;
  RuntimeScope scope;
  report_unwinder_check();
  // A live report or snapshot in progress finishes first; none starts after this.
  stop_runtime_thread();
  core::SpinLockGuard report_guard(g_report_lock);
  // No handler of the program runs until the report is written (signals stay pending).
  ScanGuard quiet;
  int saved_errno = errno;
  produce_report(how, status, have_status, true,
                 reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  errno = saved_errno;
}

namespace {

// A vfork child shares the parent's memory: reporting there would consume the parent's
// one report and scribble over its state, so only the process that owns the image reports.
bool is_vfork_child() {
  return core::sys::current_pid() != g_pid.load(std::memory_order_relaxed);
}

[[noreturn]] void exit_without_cleanup(void (*real)(int), int status) {
  if (real != nullptr) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

}  // namespace

__attribute__((destructor)) static void memtrack_destructor() {
  report_at_exit("exit", 0, false);
}

}  // namespace memtrack::rt

namespace rt = memtrack::rt;

extern "C" __attribute__((visibility("default"), noreturn)) void _exit(int status) {
  rt::note_exit_stack(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  rt::set_exit_record(memtrack::core::result::ExitHow::kUnderscoreExit, status);
  if (!rt::is_vfork_child()) rt::report_at_exit("_exit", status, true);
  rt::exit_without_cleanup(rt::g_real.exit_now, status);
}

extern "C" __attribute__((visibility("default"), noreturn)) void _Exit(int status) {
  rt::note_exit_stack(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  rt::set_exit_record(memtrack::core::result::ExitHow::kUnderscoreExit, status);
  if (!rt::is_vfork_child()) rt::report_at_exit("_Exit", status, true);
  rt::exit_without_cleanup(rt::g_real.exit_now_upper, status);
}

// The cooperation API (include/memtrack/memtrack.h).

extern "C" __attribute__((visibility("default"))) void memtrack_rt_ignore_object(const void* ptr) {
  if (ptr == nullptr || !rt::initialized()) return;
  rt::RuntimeScope scope;
  if (!rt::g_allocs.try_mark_ignored(reinterpret_cast<uintptr_t>(ptr))) {
    rt::diag("warning: memtrack_ignore_object: not the start of a live heap block; ignored");
  }
}

extern "C" __attribute__((visibility("default"))) long memtrack_rt_do_leak_check() {
  if (!rt::initialized()) return -1;
  // One report at a time, on-demand checks, snapshots and live reports alike.
  memtrack::core::SpinLockGuard guard(rt::g_report_lock);
  rt::RuntimeScope scope;
  rt::ScanGuard quiet;
  int saved_errno = errno;
  long lost = rt::produce_report("on demand (memtrack_do_leak_check)", 0, false, false,
                                 reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  errno = saved_errno;
  return lost;
}
