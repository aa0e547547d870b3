// memtrack::Error, the one exception type of the tools, and the exit codes of their failures.
// Ordinary C++ for the tools (symbolize/, report/, proc/, top/, cli/); never in the preload
// runtime.
#pragma once

#include <stdexcept>

namespace memtrack {

// Thrown by every parser of untrusted input and every failing step of a command; main()
// catches it once. what() is a complete one-line message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit codes of memtrack's own failures (docs/cli.md), distinct from a program's own status
// and from --error-exitcode.
inline constexpr int kExitToolFailed = 125;
inline constexpr int kExitNotExecutable = 126;
inline constexpr int kExitNotFound = 127;

}  // namespace memtrack
