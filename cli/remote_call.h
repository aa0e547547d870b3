// Calls functions inside another running process with ptrace, for memtrack attach
// (docs/attach.md): one thread of the process is taken at a moment it holds no lock of the C
// library or the loader, made to call a function, and given back its registers as they were.
// x86-64 only; elsewhere the constructor throws Error saying so.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/error.h"

namespace memtrack::cli {

// A code range no call may interrupt (the C library, the loader, the unwinder: they take
// locks the called function may need): a thread stopped inside one is not taken, unless it
// is waiting in a system call other than futex.
struct CodeRange {
  uint64_t start;
  uint64_t end;
};

class RemoteThread {
 public:
  // Seizes the threads of `pid` one by one until one is stopped outside `unsafe` (the main
  // thread first); the others run on. Gives up after `timeout_s` with Error.
  RemoteThread(pid_t pid, const std::vector<CodeRange>& unsafe, double timeout_s);
  // Puts the thread's registers back and lets it go, with any signal that came meanwhile.
  ~RemoteThread();
  RemoteThread(const RemoteThread&) = delete;
  RemoteThread& operator=(const RemoteThread&) = delete;

  // Writes `text` (with its NUL) below the thread's stack, where the calls' frames do not
  // reach; returns its address in the process.
  uint64_t push_string(const std::string& text);
  // Calls `function(args...)` (at most 6 integer arguments) in the thread and returns its
  // result. Throws Error if the process ends, the function faults or it does not return
  // within `timeout_s` (the thread is then given back as it is: the process may be left
  // holding a lock, which the message says).
  uint64_t call(uint64_t function, std::initializer_list<uint64_t> args, double timeout_s);
  // A NUL-terminated string of the process (at most `max` bytes).
  std::string read_string(uint64_t address, size_t max) const;

  pid_t tid() const { return tid_; }

 private:
  void restore();

  pid_t pid_ = 0;
  pid_t tid_ = 0;
  std::vector<unsigned char> saved_regs_;    // user_regs_struct
  std::vector<unsigned char> saved_xstate_;  // the FPU/SSE/AVX state
  uint64_t scratch_ = 0;                     // the strings' area, below the red zone
  uint64_t scratch_used_ = 0;
  std::vector<int> pending_signals_;  // delivered to the thread during a call
  bool restored_ = false;
};

}  // namespace memtrack::cli
