// The start marker: <result_dir>/memtrack.<pid>.started, written when a process starts under
// the runtime (constructor, fork), so the CLI can list processes that ended without writing
// their result file (killed by SIGKILL, crashed, exec'd an untracked program).
// Runtime-safe: no malloc.
#pragma once

namespace memtrack::rt {

// A marker holds the parent's pid in decimal, '\n', then the command line as captured
// (NUL-separated). Both functions do nothing without result_dir; failures are silent (the
// result file's own errors say enough). Call inside the runtime (RuntimeScope or fork
// handler).

// The current process's marker, written at start-up (the program's first image or an exec'd
// one): replaces any marker of this pid, whole (written aside, then renamed), since an
// exec'd image has a new command line.
void write_start_marker();

// The marker of a forked process: `pid`, child of `ppid`, with this process's command line
// (a forked child has its parent's). Written by the parent before fork returns, so a child
// that has not run yet (a daemon whose parent exits at once) is known before its parent
// ends, and by the child's fork handler for a fork the parent's hook did not see. Created
// only if there is no marker for `pid` yet: the first writer wins, and a child that has
// exec'd already keeps its own.
void write_forked_start_marker(int pid, int ppid);

}  // namespace memtrack::rt
