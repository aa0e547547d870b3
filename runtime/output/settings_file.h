// The settings file: <result_dir>/memtrack.<pid>.settings, the MEMTRACK_OPTIONS the process
// started with, written at start-up and kept mapped read-only, so that `memtrack snapshot`,
// `memtrack ui` and the profile follower find a running process's result directory and
// options in its /proc/PID/maps, which the program cannot change. /proc/PID/environ shows the
// memory the environment started in, which programs overwrite (redis and others write their
// process title there). A forked child republishes its parent's settings under its own pid;
// the file is removed when the process makes its final report. Runtime-safe: no malloc.
#pragma once

namespace memtrack::rt {

// Writes and maps the file. Does nothing without result_dir; failures are silent (the CLI
// then reads the environment, as before). Call inside the runtime, once per image.
void publish_settings(const char* options);

// In a forked child: the parent's settings, written and mapped under the child's pid, and the
// parent's mapping dropped (its file goes away when the parent ends).
void republish_settings_after_fork();

// At the final report: removes this process's file (the mapping stays until exit).
void withdraw_settings();

// At detach (an attached runtime): removes the file and drops the mapping, so no command
// takes the process for one running under memtrack any more.
void unpublish_settings();

}  // namespace memtrack::rt
