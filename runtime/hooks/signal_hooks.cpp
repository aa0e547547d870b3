// sigaction and signal, interposed so that the program sees its own signal table: where
// memtrack stands in for the default action, the program is told SIG_DFL, and a program
// that asks for SIG_DFL there keeps memtrack's stand-in (which ends the process just as the
// default would, after the report). Any other action replaces memtrack's.
// Calls libc (the real sigaction) but never malloc.
#include <cstring>

#include "runtime/hooks/export.h"
#include "runtime/runtime.h"
#include "runtime/signal_table.h"

namespace rt = memtrack::rt;

MEMTRACK_EXPORT_C int sigaction(int sig, const struct sigaction* action,
                                struct sigaction* old) noexcept {
  if (rt::in_runtime()) return rt::real_sigaction(sig, action, old);
  auto* stand_in = rt::stand_in_handler(sig);  // null for an invalid sig
  int result = 0;
  if (action != nullptr && stand_in != nullptr && rt::is_default_action(*action)) {
    result = rt::real_sigaction(sig, nullptr, old);  // keep the stand-in
  } else {
    result = rt::real_sigaction(sig, action, old);
    if (result == 0 && action != nullptr) rt::forget_stand_in(sig);
  }
  if (result == 0 && old != nullptr && stand_in != nullptr) {
    memset(old, 0, sizeof(*old));
    old->sa_handler = SIG_DFL;
  }
  return result;
}

// glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its handler).
MEMTRACK_EXPORT_C sighandler_t signal(int sig, sighandler_t handler) noexcept {
  struct sigaction action {};
  struct sigaction old {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  if (sig > 0 && sig < NSIG) sigaddset(&action.sa_mask, sig);
  action.sa_flags = SA_RESTART;
  if (sigaction(sig, &action, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}
