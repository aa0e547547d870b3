// The signal dispositions and mask memtrack was started with (inherited_signals.h).
#include "cli/inherited_signals.h"

#include <signal.h>

namespace memtrack::cli {
namespace {

// Indexed by signal number; NSIG covers the real-time signals too.
bool g_ignored[NSIG];
sigset_t g_mask;
bool g_remembered = false;

}  // namespace

void remember_inherited_signals() {
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    g_ignored[sig] = sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
  }
  g_remembered = sigprocmask(SIG_SETMASK, nullptr, &g_mask) == 0;
}

bool inherited_ignored(int sig) {
  return sig > 0 && sig < NSIG && g_ignored[sig];
}

void restore_inherited_signals() {
  if (!g_remembered) return;
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) continue;  // glibc's own (SIGCANCEL, SIGSETXID)
    bool ignored = current.sa_handler == SIG_IGN;
    if (ignored == g_ignored[sig] && (ignored || current.sa_handler == SIG_DFL)) continue;
    action.sa_handler = g_ignored[sig] ? SIG_IGN : SIG_DFL;
    sigaction(sig, &action, nullptr);
  }
  sigprocmask(SIG_SETMASK, &g_mask, nullptr);
}

}  // namespace memtrack::cli
