// Guarded reads for the leak scan: a SIGSEGV/SIGBUS handler that jumps back into the read
// loop instead of letting the process die. Calls libc (sigaction, pthread_sigmask) but
// never malloc.
#include "runtime/leakcheck/guarded_read.h"

#include <signal.h>
#include <unistd.h>

#include "core/sys_linux.h"
#include "runtime/signal_table.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

namespace {

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS};
struct sigaction g_saved[2];
sigset_t g_saved_mask;
int g_depth = 0;

// Another thread's fault (a thread the stopper could not stop): what the program had.
void forward(int index, int sig, siginfo_t* info, void* context) {
  const struct sigaction& old = g_saved[index];
  if ((old.sa_flags & SA_SIGINFO) != 0 && old.sa_sigaction != nullptr) {
    old.sa_sigaction(sig, info, context);
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
  } else {
    real_sigaction(sig, &old, nullptr);  // the fault repeats on return and takes this action
  }
}

void on_fault(int sig, siginfo_t* info, void* context) {
  sigjmp_buf* jump = t_thread.fault_jump;
  if (jump != nullptr) {
    t_thread.fault_address = reinterpret_cast<uintptr_t>(info->si_addr);
    siglongjmp(*jump, 1);
  }
  forward(sig == SIGSEGV ? 0 : 1, sig, info, context);
}

}  // namespace

uintptr_t next_page_after(uintptr_t address) {
  const uintptr_t page = core::sys::page_size();
  return (address & ~(page - 1)) + page;
}

ScanGuard::ScanGuard() {
  if (g_depth++ > 0) return;
  outermost_ = true;
  sigset_t quiet;
  sigfillset(&quiet);
  for (int sig : kFaultSignals) sigdelset(&quiet, sig);
  pthread_sigmask(SIG_SETMASK, &quiet, &g_saved_mask);
  struct sigaction action {};
  action.sa_sigaction = on_fault;
  // SA_NODEFER: the jump leaves the handler without sigreturn, so the signal must not be
  // added to the mask on entry. SA_ONSTACK: a scan running on an alternate signal stack
  // (the report of a stack overflow) stays on it.
  action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 2; ++i) real_sigaction(kFaultSignals[i], &action, &g_saved[i]);
}

ScanGuard::~ScanGuard() {
  --g_depth;
  if (!outermost_) return;
  for (int i = 0; i < 2; ++i) real_sigaction(kFaultSignals[i], &g_saved[i], nullptr);
  pthread_sigmask(SIG_SETMASK, &g_saved_mask, nullptr);
}

bool try_read_word(uintptr_t address, uint64_t* value) {
  bool read = false;
  read_words(address, address + kWord, [&](uint64_t word) {
    *value = word;
    read = true;
  });
  return read;
}

}  // namespace memtrack::rt
