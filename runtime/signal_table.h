// The program's view of its signal table. memtrack installs handlers where the program left
// the default action (reports on fatal signals, snapshot requests); the interposed sigaction
// and signal show the program SIG_DFL there, and a program that installs its own handler
// replaces memtrack's for good. Runtime-safe: no malloc.
#pragma once

#include <signal.h>

// glibc's exported name of the real sigaction (the hook below is `sigaction`).
extern "C" int __sigaction(int sig, const struct sigaction* action, struct sigaction* old);

namespace memtrack::rt {

// The real sigaction: the runtime's own calls go through this, never through the hook.
inline int real_sigaction(int sig, const struct sigaction* action, struct sigaction* old) {
  return __sigaction(sig, action, old);
}

// Installs `handler` (SA_SIGINFO | SA_RESTART | SA_ONSTACK) for `sig` if its action is the
// default, and hides it from the program. Returns whether it was installed. Not thread safe:
// called from the constructor.
bool install_hidden_handler(int sig, void (*handler)(int, siginfo_t*, void*));

// The handler memtrack stands in with for `sig`, or null where the program has the action
// it chose (also for an invalid `sig`). Thread safe.
void (*stand_in_handler(int sig))(int, siginfo_t*, void*);
// The program installed an action of its own for `sig`: memtrack's stand-in is gone.
void forget_stand_in(int sig);
// True for SIG_DFL without SA_SIGINFO.
bool is_default_action(const struct sigaction& action);

// Puts the default action back for `sig` (from a handler of memtrack's, before raising it
// again). Async-signal-safe.
void restore_default_action(int sig);

}  // namespace memtrack::rt
