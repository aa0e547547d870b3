// memtrack attach's way into a running process (docs/attach.md). `memtrack attach PID` makes
// the process dlopen libmemtrack_attach.so (this code built without memtrack's own heap,
// whose constructors do nothing) and call memtrack_attach, which starts the runtime with the
// CLI's options and rewrites every module's GOT entries of the allocation functions to
// memtrack's hooks (link/got_patch.h). The runtime's thread detaches (live/live_thread.h).
// Runtime-safe: no malloc of the program's heap.
#pragma once

namespace memtrack::rt {

// What memtrack_attach returns; the CLI words each (cli/attach_command.cpp).
enum class AttachStatus : int {
  kAttached = 0,
  kAlreadyAttached = 1,   // a memtrack attach is in progress
  kTrackedFromStart = 2,  // the program runs under memtrack run or the link-time runtime
  kNoLogFile = 3,         // the log file in the result directory cannot be opened
  kNoRealAllocator = 4,   // malloc, free, calloc or realloc not found in the global scope
  kNoThread = 5,          // memtrack's thread did not start (it detaches and watches)
};

}  // namespace memtrack::rt

// Called in the target by `memtrack attach` (ptrace): `options` as MEMTRACK_OPTIONS,
// `log_path` the file that takes the runtime's diagnostics instead of the program's stderr,
// `watcher` the CLI's pid (the runtime detaches on its own when that process is gone).
extern "C" int memtrack_attach(const char* options, const char* log_path, int watcher);
