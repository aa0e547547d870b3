// The start marker: <result_dir>/memtrack.<pid>.started, written when a process starts under
// the runtime (constructor, fork), so the CLI can list processes that ended without writing
// their result file (killed by SIGKILL, crashed, exec'd an untracked program).
// Runtime-safe: no malloc.
#pragma once

namespace memtrack::rt {

// A marker holds the parent's pid in decimal, then, after a space, how the marker came to be
// when it was not written by the image itself ("forked": by fork, the child has not exec'd;
// "spawned": by posix_spawn in the parent; "exec": before an exec, whose image may never run
// the runtime), '\n', then the command line (NUL-separated). The functions do nothing
// without result_dir; failures are silent (the result file's own errors say enough). Call
// inside the runtime (RuntimeScope or fork handler).

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

// The marker of a child posix_spawn started (glibc's internal exec, which no hook sees):
// written by the parent once the spawn succeeded, with the spawned command line. Created only
// if there is none yet: a child whose image runs the runtime writes its own.
void write_spawned_start_marker(int pid, int ppid, char* const argv[]);

// Before an exec: the current process's marker says it now runs `argv` (replacing any). An
// image that runs the runtime (a dynamic program LD_PRELOAD reaches) writes its own over it;
// a static or setuid one never does, and the CLI lists it as a process without leak data,
// by its own command line. A vfork child, which has no marker of its own, gets one this way.
void write_exec_start_marker(char* const argv[]);
// After a failed exec: the image goes on, its marker back as it was (a vfork child's, or a
// silent child's, removed).
void undo_exec_start_marker();

// Called by the fork child handler: this image is a copy of its parent that has not exec'd,
// which its marker says when it is written again.
void note_forked_copy();

}  // namespace memtrack::rt
