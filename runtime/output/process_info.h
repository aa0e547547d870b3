// What the result file says about the process: command line, executable, how it ended.
// Runtime-safe: fixed buffers, filled with raw reads of /proc; no malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/result_format.h"

namespace memtrack::rt {

struct ExitRecord {
  core::result::ExitHow how = core::result::ExitHow::kUnknown;
  int status = 0;
};

// Reads /proc/self/cmdline and /proc/self/exe once (from the constructor, before the program
// can rewrite its argv). Not thread safe; called once.
void capture_process_info();

// main as __libc_start_main received it; wrap_main keeps it and returns the wrapper to pass
// on instead, which marks main's frame for the unwinder and records the status main returns.
// Called once, before main.
using MainFn = int (*)(int, char**, char**);
MainFn wrap_main(MainFn main);

// NUL-separated argv as captured, and its size in bytes.
const char* command_line(size_t* /*out*/ size);
const char* executable_path();

// The exit status as recorded by the exit, _exit and _Exit hooks and by the return from main.
ExitRecord exit_record();
void set_exit_record(core::result::ExitHow how, int status);

// Where the program's live stack ends on the thread that ends the process: the frame of the
// exit hook, or of main's wrapper once main has returned. Below it lie only exit handling and
// stale values of returned frames, which memcheck ignores as undefined; the leak scan starts
// above it. Returns 0 if not recorded for `tid`.
void note_exit_stack(uintptr_t frame);
uintptr_t exit_stack(int tid);

// Removes libmemtrack.so from LD_PRELOAD in place (follow_exec=0), so programs this process
// executes run without it while forked children of this image stay tracked.
void stop_following_exec();

}  // namespace memtrack::rt
