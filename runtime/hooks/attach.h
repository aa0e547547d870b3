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

// What memtrack_after_detach returns.
enum class AfterDetachStatus : int {
  kRestored = 0,          // single-threaded again, as before the attach: glibc told so
  kWasMultiThreaded = 1,  // the program had had threads before the attach: nothing to restore
  kOtherThreads = 2,      // the program has other threads now: glibc's state is right as it is
  kStillAttached = 3,
};

}  // namespace memtrack::rt

// Called in the target by `memtrack attach` (ptrace): `options` as MEMTRACK_OPTIONS,
// `log_path` the file that takes the runtime's diagnostics instead of the program's stderr,
// `watcher` the CLI's pid (the runtime detaches on its own when that process is gone).
extern "C" int memtrack_attach(const char* options, const char* log_path, int watcher);

// Called in the target by `memtrack attach` after the detach, from a thread stopped where a
// call is safe (not inside pthread_create): joins memtrack's thread and, if the program was
// single-threaded before the attach and is again, sets glibc's __libc_single_threaded back
// (pthread_create of memtrack's thread cleared it, and glibc never sets it again: its malloc
// would take the arena lock on every call for the rest of the program's life).
extern "C" int memtrack_after_detach();
