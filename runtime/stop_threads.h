// Stops every other thread of the process for the leak scan and captures its registers:
// each gets a real-time signal whose handler saves its context and waits until released.
// Runtime-safe: no malloc; the handler is async-signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::rt {

struct StoppedThread {
  int tid;
  bool captured;  // false: it did not answer in time (its stack is scanned whole)
  uintptr_t sp;
  uintptr_t thread_pointer;  // its TCB (fs base), to tell live threads' TLS from dead ones
  uintptr_t regs[23];        // general-purpose registers from its ucontext
};

// Not thread safe: one scan at a time (the report holds its once-per-process guard).
class ThreadStopper {
 public:
  static constexpr size_t kMaxThreads = 1024;

  // Stops every thread but the caller. Threads found inside the runtime (they may hold a
  // table lock) are let go and asked again until they are caught outside it.
  void stop_all();
  // Lets them run again and waits until each has left the handler.
  void resume_all();

  size_t count() const { return count_; }
  const StoppedThread& thread(size_t i) const { return threads_[i]; }

 private:
  StoppedThread threads_[kMaxThreads];
  size_t count_ = 0;
};

}  // namespace memtrack::rt
