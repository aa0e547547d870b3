// The end of the program: the exit report from the library destructor and from _exit and
// _Exit, which skip it. Runtime-safe: no malloc.
#pragma once

namespace memtrack::rt {

// Registers the exit report to run after every destructor of every library (an exit handler
// registered before __libc_start_main registers the dynamic linker's). Called once, by the
// library constructor.
void register_report_after_destructors();

// Produces the exit report once per process. `how` says what ended the program.
void report_at_exit(const char* how, int status, bool have_status);

// Produces the process's one exit report now, while it runs (__lsan_do_leak_check: the
// check at exit moves here); later calls and the exit itself report nothing more.
void report_final_now(const char* how);

// An on-demand check (memtrack_do_leak_check, __lsan_do_recoverable_leak_check): a report
// now, the exit report still to come. `how` names the call. Returns the lost bytes, or -1.
long report_check_now(const char* how);

// Marks the block that starts at `ptr` as never a leak; warns, naming `api`, if `ptr` is
// not the start of a live block.
void ignore_object(const void* ptr, const char* api);

}  // namespace memtrack::rt
