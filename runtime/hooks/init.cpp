// Start-up of the runtime: resolves the real allocator, reads MEMTRACK_OPTIONS, installs
// fork handlers. May call libc (dlsym, getenv, pthread_atfork) but never malloc directly.
#include "runtime/hooks/init.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "core/lsan_options.h"
#include "core/metadata_budget.h"
#include "core/sys_linux.h"
#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/hooks/exec_env.h"
#include "runtime/hooks/exit_hooks.h"
#include "runtime/hooks/program_heap.h"
#include "runtime/hooks/signal_report.h"
#include "runtime/leakcheck/custom_blocks.h"
#include "runtime/leakcheck/leak_scan.h"
#include "runtime/leakcheck/root_regions.h"
#include "runtime/link/got_patch.h"
#include "runtime/link/link_mode.h"
#include "runtime/link/real_functions.h"
#include "runtime/live/live_thread.h"
#include "runtime/output/blind_spots.h"
#include "runtime/output/modules.h"
#include "runtime/output/process_info.h"
#include "runtime/output/profile_output.h"
#include "runtime/output/settings_file.h"
#include "runtime/output/start_marker.h"
#include "runtime/record/heap_check.h"
#include "runtime/record/misuse.h"
#include "runtime/record/peak.h"
#include "runtime/record/record.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"
#include "runtime/unwind/elf_symbols.h"
#include "runtime/unwind/fast_unwind.h"
#include "runtime/unwind/unwind.h"

namespace memtrack::rt {

namespace {

void flag_warning(const char* message) {
  core::FixedText<512> line;
  line.str("warning: MEMTRACK_OPTIONS: ").str(message);
  diag(line.data());
}

using DefaultOptions = const char* (*)();

const char* program_default_options(const char* function_name) {
  auto defaults = reinterpret_cast<DefaultOptions>(find_main_program_function(function_name));
  return defaults != nullptr ? defaults() : nullptr;
}

// LeakSanitizer's options (core/lsan_options.h): those of the scan always; those of the
// report only for the runtime's own text report (under memtrack run the CLI reads them).
void apply_lsan_options(const char* text) {
  size_t pos = 0;
  core::LsanEntry entry;
  while (core::next_lsan_entry(text, &pos, &entry)) {
    if (!core::apply_lsan_runtime_option(entry, &g_flags)) {
      core::apply_lsan_standalone_option(entry, &g_flags);
    }
  }
}

// Without memtrack run nobody else tells the user which LeakSanitizer options have no effect.
void note_ignored_lsan_options(const char* source, const char* text) {
  size_t pos = 0;
  core::LsanEntry entry;
  while (core::next_lsan_entry(text, &pos, &entry)) {
    const char* why = nullptr;
    switch (entry.option) {
      case core::LsanOption::kOther:
        why = core::lsan_ignored_reason(entry.name, entry.name_size);
        break;
      case core::LsanOption::kSuppressions:
      case core::LsanOption::kExitcode:
      case core::LsanOption::kPrintSuppressions:
        why = "applies under memtrack run only";
        break;
      default:
        break;
    }
    if (why == nullptr) continue;
    core::FixedText<512> line;
    line.str("note: ").str(source).str(": ").str(entry.name, entry.name_size);
    line.str(" is ignored (").str(why).chr(')');
    diag(line.data());
  }
}

// An attaching runtime's options (memtrack_attach), in place of the environment's.
const char* g_attach_options = nullptr;

// memtrack attach passes the options the CLI made; the program's environment and defaults
// are not read (they were meant for whatever started it). The program's allocator serves
// every block, so that what it allocates while memtrack is attached stays its own after
// the detach.
void read_attach_options() {
  core::set_defaults(&g_flags);
  core::parse_flags(g_attach_options, &g_flags, flag_warning);
  g_flags.glibc_malloc = true;
  core::validate_flags(&g_flags, flag_warning);
  core::set_metadata_limit(static_cast<size_t>(g_flags.max_metadata_mb) << 20);
}

// Later sources win: LeakSanitizer's options (the program's __lsan_default_options, then
// LSAN_OPTIONS), then memtrack's (memtrack_default_options, then MEMTRACK_OPTIONS).
void read_options() {
  if (g_attach_options != nullptr) {
    read_attach_options();
    return;
  }
  core::set_defaults(&g_flags);
  const char* lsan_defaults = program_default_options("__lsan_default_options");
  const char* lsan_env = getenv("LSAN_OPTIONS");
  apply_lsan_options(lsan_defaults);
  apply_lsan_options(lsan_env);
  core::parse_flags(program_default_options("memtrack_default_options"), &g_flags, flag_warning);
  core::parse_flags(getenv("MEMTRACK_OPTIONS"), &g_flags, flag_warning);
  core::validate_flags(&g_flags, flag_warning);
  if (g_flags.result_dir[0] == '\0') {
    note_ignored_lsan_options("__lsan_default_options", lsan_defaults);
    note_ignored_lsan_options("LSAN_OPTIONS", lsan_env);
  }
  core::set_metadata_limit(static_cast<size_t>(g_flags.max_metadata_mb) << 20);
  if (g_flags.help) core::write_flag_help(2);
}

void report_and_halt(const char* how) {
  report_at_exit(how, 0, false);
}

void initialize_locked() {
  g_pid.store(core::sys::current_pid(), std::memory_order_relaxed);
  resolve_allocator_functions();
  if (g_real.malloc == nullptr || g_real.free == nullptr || g_real.calloc == nullptr ||
      g_real.realloc == nullptr) {
    if (g_attach_options != nullptr) return;  // memtrack_attach says so; the program goes on
    static const char kMessage[] =
        "memtrack: fatal: cannot find the real malloc/free with dlsym(RTLD_NEXT); is "
        "libmemtrack.so loaded with LD_PRELOAD?\n";
    core::sys::write_all(2, kMessage, sizeof(kMessage) - 1);
    _exit(125);
  }
  set_halt_report(report_and_halt);
  read_options();
  init_program_heap();
  init_peak_tracking();
  init_misuse();
  init_sampling();
  init_heap_check();
  // The first unwind initialises the unwinder's own state (it may allocate); do it now,
  // inside the runtime, rather than in the middle of the program's first malloc.
  init_unwinder();
  uintptr_t begin = 0;
  uintptr_t end = 0;
  if (linked_code_range(&begin, &end)) set_skipped_code(begin, end);
  if (linked_globals_range(&begin, &end)) set_runtime_globals_range(begin, end);
  find_blind_spots();
}

// The forking thread is inside the runtime from prepare to parent/child, so a leak scan on
// memtrack's thread never parks it while it holds the tables' locks. The report lock comes
// first, as in every report.
void fork_prepare() {
  ++t_thread.in_runtime;
  g_report_lock.lock();
  g_stacks.lock_all();
  g_allocs.lock_all();
  custom_blocks_lock_all();
  misuse_lock_all();
  g_guard_pool.lock();
  g_quarantine.lock();
  large_blocks_lock_all();
  loader_walk_fork_prepare();  // last: a walk holds no runtime lock, a report may walk
}

void fork_parent() {
  loader_walk_fork_parent();
  large_blocks_unlock_all();
  g_quarantine.unlock();
  g_guard_pool.unlock();
  misuse_unlock_all();
  custom_blocks_unlock_all();
  g_allocs.unlock_all();
  g_stacks.unlock_all();
  g_report_lock.unlock();
  --t_thread.in_runtime;
}

void fork_child() {
  // A child of an attached process has nobody watching it: it goes on as it would have
  // without memtrack (its blocks are its allocator's own), and writes nothing.
  if (attached()) {
    restore_got_entries();
    g_presence.store(Presence::kDetached, std::memory_order_release);
    g_silent.store(true, std::memory_order_relaxed);
  }
  loader_walk_fork_child();
  g_guard_pool.reset_after_fork();
  g_quarantine.reset_after_fork();
  large_blocks_reset_after_fork();
  misuse_reset_after_fork();
  root_regions_reset_after_fork();
  custom_blocks_reset_after_fork();
  g_allocs.reset_after_fork();
  g_stacks.reset_after_fork();
  int parent = g_pid.load(std::memory_order_relaxed);  // getppid() is 1 if the parent has gone
  g_pid.store(core::sys::current_pid(), std::memory_order_relaxed);
  runtime_thread_fork_child();
  republish_settings_after_fork();
  note_forked_copy();
  if (g_flags.silent_after_fork) {
    g_silent.store(true, std::memory_order_relaxed);
  } else {
    // Normally the parent's fork hook has written it, or will before fork returns there.
    write_forked_start_marker(g_pid.load(std::memory_order_relaxed), parent);
  }
  --t_thread.in_runtime;
}

}  // namespace

bool ensure_initialized() {
  if (initialized()) return true;
  if (t_thread.initializing) return false;  // dlsym re-entered malloc on the initialising thread
  if (!process_ready()) return false;       // static glibc's own start-up (link_mode.h)
  int expected = 0;
  if (g_init_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    t_thread.initializing = true;
    {
      RuntimeScope scope;
      initialize_locked();
    }
    t_thread.initializing = false;
    g_init_state.store(2, std::memory_order_release);
    return true;
  }
  while (!initialized()) core::sys::yield_cpu();
  return true;
}

bool initialize_attached(const char* options) {
  g_attach_options = options;
  if (initialized()) {
    read_options();  // attached again: this attach's options
    return true;
  }
  resolve_in_global_scope();
  ensure_initialized();
  return g_real.malloc != nullptr && g_real.free != nullptr && g_real.calloc != nullptr &&
         g_real.realloc != nullptr;
}

void start_attached_services(const char* options) {
  RuntimeScope scope;
  static bool fork_handlers = false;  // they cannot be removed: they check attached()
  if (!fork_handlers) fork_handlers = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
  capture_process_info();
  write_start_marker();
  init_profile();  // before the hooks are in place: the profile starts with the attach
  publish_settings(options);
  start_runtime_thread();
}

// Runs after the libraries the program links (libc, libstdc++) are initialised and before
// the program's own constructors. Allocations made earlier were already recorded lazily.
// Loaded by memtrack attach instead, it waits for memtrack_attach (hooks/attach.h).
__attribute__((constructor)) static void memtrack_constructor() {
  if (kAttachRuntime) {
    g_presence.store(Presence::kDormant, std::memory_order_release);
    return;
  }
  int saved_errno = core::sys::get_errno();
  ensure_initialized();
  {
    RuntimeScope scope;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    register_report_after_destructors();
    capture_process_info();
    capture_exec_environment();
    write_start_marker();
    publish_settings(getenv("MEMTRACK_OPTIONS"));
    if (!g_flags.follow_exec) stop_following_exec();
    // The heap check's faults reach it through the crash handler.
    if (g_flags.report_on_signal || g_heap_check.interval != 0) install_signal_report();
    start_runtime_thread();
  }
  core::sys::set_errno(saved_errno);
}

}  // namespace memtrack::rt
