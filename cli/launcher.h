// Starting the program under libmemtrack.so and waiting for it: locating the runtime,
// building the environment, forwarding signals, decoding the exit status.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "report/model.h"

namespace memtrack::cli {

// libmemtrack.so next to this executable: build tree (../runtime/) or installed tree
// (../lib/memtrack/); MEMTRACK_RUNTIME overrides. Throws Error if none exists.
std::string find_runtime();

// memtrack ui: executes memtrack-ui (beside memtrack, or in ../lib/memtrack/) with memtrack's
// own arguments. Returns only by throwing Error (not found, or exec failed).
[[noreturn]] void exec_ui(char** argv);
// The path of memtrack's helper executable `name` (memtrack-ui), next to memtrack or in
// ../lib/memtrack/. Throws Error if neither is there.
std::string helper_executable(const char* name);

// Resolves PROG like execvp would. Throws LaunchError with exit code 127 (not found) or 126
// (not executable) and a one-line message.
class LaunchError : public Error {
 public:
  LaunchError(const std::string& message, int exit_code) : Error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};
std::string resolve_program(const std::string& program);

struct LaunchResult {
  int pid = 0;
  report::ExitInfo exit;  // how the program ended (kExit or kSignal)
};

// Runs `argv` with LD_PRELOAD = runtime (+ any existing LD_PRELOAD) and MEMTRACK_OPTIONS =
// any existing options + `runtime_options`, forwarding SIGINT, SIGTERM, SIGHUP and SIGQUIT to
// it while it runs. Returns when it has exited. Throws LaunchError/Error on failure to start.
// memtrack becomes a child subreaper (prctl(2)) first: processes the program leaves behind
// (a daemon that double-forks and calls setsid) become memtrack's children, so
// wait_for_descendants() can wait for them. `started`, if given, is called with the program's
// pid as soon as it is forked.
LaunchResult launch_and_wait(const std::vector<std::string>& argv, const std::string& runtime,
                             const std::string& runtime_options,
                             const std::function<void(int)>& started = {});

// After launch_and_wait(): reaps the program's descendants that memtrack inherited, waiting
// up to `wait_ms` for those still running. Returns how each reaped one ended, by pid;
// `*still_running` says whether some were still running at the deadline.
std::map<uint32_t, report::ExitInfo> wait_for_descendants(int wait_ms, bool* /*out*/ still_running);

}  // namespace memtrack::cli
