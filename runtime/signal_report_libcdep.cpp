// The report for a program ended by SIGINT, SIGTERM, SIGHUP or SIGQUIT (Ctrl-C on a server,
// memtrack run forwarding a signal): memcheck reports then too. A handler is installed only
// where the program left the default action; it writes the report, restores the default
// action and re-raises, so the process still dies by the same signal. Calls libc
// (sigaction, raise) but never malloc.
#include <signal.h>
#include <ucontext.h>

#include "runtime/process_info.h"
#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

constexpr int kReportedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

const char* signal_word(int sig) {
  switch (sig) {
    case SIGINT:
      return "killed by SIGINT";
    case SIGTERM:
      return "killed by SIGTERM";
    case SIGHUP:
      return "killed by SIGHUP";
    default:
      return "killed by SIGQUIT";
  }
}

void on_fatal_signal(int sig, siginfo_t*, void* context) {
  // A thread interrupted inside the runtime may hold a table lock the report needs: then
  // the process dies without a report rather than deadlocking.
  if (!in_runtime()) {
    // The leak scan starts at the interrupted stack pointer: below it are this handler and
    // the dead red zone, not the program's live frames.
    const auto* uc = static_cast<const ucontext_t*>(context);
    note_exit_stack(static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]));
    set_exit_record(core::result::ExitHow::kSignal, sig);
    report_at_exit(signal_word(sig), sig, false);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // delivered when this handler returns (the signal is blocked while it runs)
}

}  // namespace

void install_signal_report() {
  for (int sig : kReportedSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
        (old.sa_flags & SA_SIGINFO) != 0) {
      continue;  // the program (or its parent, for SIG_IGN) chose something else: keep it
    }
    struct sigaction report {};
    report.sa_sigaction = on_fatal_signal;
    sigemptyset(&report.sa_mask);
    report.sa_flags = SA_RESTART | SA_SIGINFO;
    sigaction(sig, &report, nullptr);
  }
}

}  // namespace memtrack::rt
