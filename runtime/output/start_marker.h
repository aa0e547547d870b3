// The start marker: <result_dir>/memtrack.<pid>.started, written when a process starts under
// the runtime (constructor, fork child), so the CLI can list processes that ended without
// writing their result file (killed by SIGKILL, crashed, exec'd an untracked program).
// Runtime-safe: no malloc.
#pragma once

namespace memtrack::rt {

// Writes the marker for the current pid: the parent's pid in decimal, '\n', then the command
// line as captured (NUL-separated). Does nothing without result_dir. Failures are silent: the
// result file's own errors say enough. Call inside the runtime (RuntimeScope or fork handler).
void write_start_marker();

}  // namespace memtrack::rt
