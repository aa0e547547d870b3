// The signal dispositions and mask memtrack was started with. The program must start with
// exactly those (`nohup memtrack run -- ./server`: SIGHUP stays ignored in the server), so
// the launcher restores them in the child before exec; and memtrack keeps a signal it was
// given ignored ignored itself, neither forwarding it nor cleaning up on it.
#pragma once

namespace memtrack::cli {

// Reads the dispositions and the mask. Call first thing in main, before any handler is set.
void remember_inherited_signals();

// True if `sig` was ignored when memtrack started.
bool inherited_ignored(int sig);

// Sets every signal's disposition back to what memtrack was started with (ignored or
// default: a handler never survives exec) and the mask too. Async-signal-safe: for the
// child between fork and exec.
void restore_inherited_signals();

}  // namespace memtrack::cli
