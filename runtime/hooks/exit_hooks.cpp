// The end of the program: the exit report from the library destructor (after the program's
// atexit handlers and static destructors) and from _exit/_Exit, which skip both.
// Calls libc (open, dladdr via the renderer) but never malloc.
#include "runtime/hooks/exit_hooks.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/spin_lock.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/alloc_guard.h"
#include "runtime/diag.h"
#include "runtime/hooks/export.h"
#include "runtime/hooks/program_heap.h"
#include "runtime/leakcheck/guarded_read.h"
#include "runtime/leakcheck/leak_report.h"
#include "runtime/leakcheck/leak_scan.h"
#include "runtime/link/link_mode.h"
#include "runtime/link/real_functions.h"
#include "runtime/live/live_thread.h"
#include "runtime/output/process_info.h"
#include "runtime/output/profile_output.h"
#include "runtime/output/report.h"
#include "runtime/output/report_text.h"
#include "runtime/output/result_file.h"
#include "runtime/output/settings_file.h"
#include "runtime/output/trace_log.h"
#include "runtime/runtime.h"
#include "runtime/unwind/unwind.h"

// glibc's __cxa_atexit (stdlib/cxa_atexit.c), the function behind atexit, taking the DSO
// whose unloading runs the handler early (none here). libmemtrack.so is linked with
// --wrap=__cxa_atexit, which sends the runtime's other calls elsewhere (resolve_dlsym.cpp);
// weak, since the link-time archive has no such name (and does not call it).
extern "C" int __real___cxa_atexit(void (*function)(void*), void* argument, void* dso_handle)
    __attribute__((weak));

namespace memtrack::rt {
namespace {

std::atomic<bool> g_reported{false};
// The report was made by __lsan_do_leak_check: the exit still owes the unwinder check.
std::atomic<bool> g_reported_early{false};

}  // namespace

void report_at_exit(const char* how, int status, bool have_status) {
  // memtrack attach's runtime reports at exit only while attached.
  if (!initialized() || presence() == Presence::kDetached) return;
  drain_deferred_frees();   // before the event log's last line and the leak scan
  trace_log_flush_final();  // every path that ends the process comes here first
  finish_profile();
  withdraw_settings();
  if (!g_flags.report_at_exit) {
    report_unwinder_check();
    return;
  }
  if (g_reported_early.exchange(false)) {
    RuntimeScope scope;
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

void report_final_now(const char* how) {
  if (!initialized()) return;
  if (g_reported.exchange(true)) return;
  g_reported_early.store(true);
  RuntimeScope scope;
  core::SpinLockGuard report_guard(g_report_lock);
  ScanGuard quiet;
  int saved_errno = errno;
  produce_report(how, 0, false, true, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  errno = saved_errno;
}

long report_check_now(const char* how) {
  if (!initialized()) return -1;
  // One report at a time, on-demand checks, snapshots and live reports alike.
  core::SpinLockGuard guard(g_report_lock);
  RuntimeScope scope;
  ScanGuard quiet;
  int saved_errno = errno;
  long lost =
      produce_report(how, 0, false, false, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  errno = saved_errno;
  return lost;
}

void ignore_object(const void* ptr, const char* api) {
  if (ptr == nullptr || !initialized()) return;
  RuntimeScope scope;
  if (!g_allocs.try_mark_ignored(reinterpret_cast<uintptr_t>(ptr))) {
    core::FixedText<160> line;
    line.str("warning: ").str(api).str(": not the start of a live heap block; ignored");
    diag(line.data());
  }
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

namespace {

// Set once the exit report is registered to run after every destructor (below); the library
// destructor is then not where the report is made.
std::atomic<bool> g_report_after_destructors{false};

void report_after_destructors(void* /*unused*/) {
  report_at_exit("exit", 0, false);
}

}  // namespace

// glibc's exit runs its handlers last registered first. __libc_start_main registers the
// dynamic linker's destructor, which runs every library's DT_FINI_ARRAY (and their
// __cxa_atexit entries), after the preloaded libraries' constructors have run, this one's
// included: a handler registered here, with no DSO handle (so that this library's own
// finalization does not run it), therefore runs after all of them, and after the program's
// atexit handlers and static destructors; only stdio's final flush and _exit come later, as
// under memcheck. The library destructor stays the report's place in a static program (whose
// __cxa_atexit calls the link-time archive drops; its own destructors run after the
// program's, runtime.md "The link-time runtime").
void register_report_after_destructors() {
  if (link_mode() != LinkMode::kPreload || __real___cxa_atexit == nullptr) return;
  AllowAllocation allowed("__cxa_atexit");  // beyond its first 32 entries glibc callocs more
  if (__real___cxa_atexit(report_after_destructors, nullptr, nullptr) == 0) {
    g_report_after_destructors.store(true, std::memory_order_relaxed);
  }
}

__attribute__((destructor)) static void memtrack_destructor() {
  if (!g_report_after_destructors.load(std::memory_order_relaxed)) {
    report_at_exit("exit", 0, false);
  }
}

}  // namespace memtrack::rt

namespace rt = memtrack::rt;

MEMTRACK_EXPORT_C __attribute__((noreturn)) void _exit(int status) {
  rt::note_exit_stack(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  rt::set_exit_record(memtrack::core::result::ExitHow::kUnderscoreExit, status);
  if (!rt::is_vfork_child()) rt::report_at_exit("_exit", status, true);
  rt::exit_without_cleanup(rt::g_real.exit_now, status);
}

MEMTRACK_EXPORT_C __attribute__((noreturn)) void _Exit(int status) {
  rt::note_exit_stack(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  rt::set_exit_record(memtrack::core::result::ExitHow::kUnderscoreExit, status);
  if (!rt::is_vfork_child()) rt::report_at_exit("_Exit", status, true);
  rt::exit_without_cleanup(rt::g_real.exit_now_upper, status);
}

// The cooperation API (include/memtrack/memtrack.h).

MEMTRACK_EXPORT_C void memtrack_rt_ignore_object(const void* ptr) {
  rt::ignore_object(ptr, "memtrack_ignore_object");
}

MEMTRACK_EXPORT_C long memtrack_rt_do_leak_check() {
  return rt::report_check_now("on demand (memtrack_do_leak_check)");
}
