// The end of the program: the exit report from the library destructor and from _exit and
// _Exit, which skip it. Runtime-safe: no malloc.
#pragma once

namespace memtrack::rt {

// Produces the exit report once per process. `how` says what ended the program.
void report_at_exit(const char* how, int status, bool have_status);

}  // namespace memtrack::rt
