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

// NUL-separated argv as captured, and its size in bytes.
const char* command_line(size_t* /*out*/ size);
const char* executable_path();

// The exit status as recorded by the exit, _exit and _Exit hooks and by the return from main.
ExitRecord exit_record();
void set_exit_record(core::result::ExitHow how, int status);

// Removes libmemtrack.so from LD_PRELOAD in place (follow_exec=0), so programs this process
// executes run without it while forked children of this image stay tracked.
void stop_following_exec();

}  // namespace memtrack::rt
