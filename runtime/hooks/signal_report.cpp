// The report of a program ended by a signal. memcheck reports then too, and a crash is when a
// developer wants the report most.
// - SIGINT, SIGTERM, SIGHUP, SIGQUIT (Ctrl-C on a server, memtrack run forwarding a signal)
//   and SIGPIPE (`prog | head -1`): the leak report.
// - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT (abort, std::terminate, assert): a crash section
//   (signal, faulting address, the crashing thread's stack) and the leak report.
// A handler is installed only where the program left the default action, and the program
// never sees it (signal_hooks.cpp): it may install its own at any time. After the
// report the default action is restored and the signal raised again, so the process dies by
// the same signal, with the same status and core dump. Calls libc but never malloc.
#include "runtime/hooks/signal_report.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "core/sys_linux.h"
#include "runtime/hooks/exit_hooks.h"
#include "runtime/machine_context.h"
#include "runtime/output/process_info.h"
#include "runtime/record/crash.h"
#include "runtime/record/heap_check.h"
#include "runtime/runtime.h"
#include "runtime/signal_table.h"

namespace memtrack::rt {
namespace {

constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
// The alternate stack the crash handler runs on when the main thread's stack overflowed.
constexpr size_t kAltStackBytes = size_t{256} << 10;

std::atomic<bool> g_ending{false};

const char* ending_phrase(int sig) {
  switch (sig) {
    case SIGINT:
      return "killed by SIGINT";
    case SIGTERM:
      return "killed by SIGTERM";
    case SIGHUP:
      return "killed by SIGHUP";
    case SIGQUIT:
      return "killed by SIGQUIT";
    case SIGPIPE:
      return "killed by SIGPIPE";
    default:
      return "crashed";
  }
}

bool is_crash_signal(int sig) {
  for (int s : kCrashSignals) {
    if (s == sig) return true;
  }
  return false;
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  // A bad access to a block on a guard page (--check-heap): its error first; in the continue
  // mode the page is open now and the instruction runs again when the handler returns.
  if (sig == SIGSEGV && report_guard_fault(info, context) == GuardFault::kContinued) return;
  // A thread interrupted inside the runtime may hold a table lock the report needs: then
  // the process dies without a report rather than deadlocking. The first fatal signal wins
  // (two threads crashing at once).
  if (!in_runtime() && !g_ending.exchange(true)) {
    const auto* uc = static_cast<const ucontext_t*>(context);
    if (is_crash_signal(sig)) record_crash(sig, info, context);
    // The leak scan starts at the interrupted stack pointer: below it are this handler and
    // the dead red zone, not the program's live frames. The thread's registers are no roots:
    // it dies of the signal, and a scratch register that still holds a pointer the program
    // has dropped (left there by memset, say) would keep a lost block alive (memcheck does
    // not scan a dying thread's registers either).
    note_exit_stack(context_sp(uc));
    set_exit_record(core::result::ExitHow::kSignal, sig);
    report_at_exit(ending_phrase(sig), sig, false);
  }
  restore_default_action(sig);
  // A fault the kernel raised for an instruction happens again when the handler returns,
  // now with the default action; any other signal is raised again (it stays blocked until
  // the handler returns).
  bool repeats = info != nullptr && info->si_code > 0 && is_crash_signal(sig) && sig != SIGABRT;
  if (!repeats) raise(sig);
}

// The main thread gets an alternate signal stack (unless the program set one), so a stack
// overflow is reported too. Other threads have none: their overflow dies unreported.
void install_alternate_stack() {
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return;
  void* memory = core::sys::map_pages(kAltStackBytes);
  if (memory == nullptr) return;
  stack_t alt{};
  alt.ss_sp = memory;
  alt.ss_size = kAltStackBytes;
  if (sigaltstack(&alt, nullptr) != 0) core::sys::unmap_pages(memory, kAltStackBytes);
}

}  // namespace

void install_signal_report() {
  install_alternate_stack();
  for (int sig : kTerminationSignals) install_hidden_handler(sig, on_fatal_signal);
  for (int sig : kCrashSignals) install_hidden_handler(sig, on_fatal_signal);
}

}  // namespace memtrack::rt
