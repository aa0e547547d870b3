// Stops every other thread of the process for the leak scan and captures its registers:
// each gets a real-time signal whose handler saves its context and waits until released.
// Runtime-safe: no malloc; the handler is async-signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/machine_context.h"

namespace memtrack::rt {

struct StoppedThread {
  int tid;
  bool captured;        // false: it did not answer (its stack is scanned whole)
  bool given_up;        // it had exited or had the stop signal blocked: not waited for
  int blocked_checks;   // the checks in a row that found it unable to take the signal
  uint64_t checked_ns;  // when the last of them was made
  // How often it entered and left the stop handler (it passes through while inside the
  // runtime), and how often it had entered at the last check.
  uint32_t entered;
  uint32_t left;
  uint32_t entered_at_check;
  uintptr_t sp;
  uintptr_t thread_pointer;           // its TCB (fs base), to tell live threads' TLS from dead ones
  uintptr_t regs[kContextRegisters];  // general-purpose registers from its ucontext
};

// Not thread safe: one scan at a time (the report holds its once-per-process guard).
class ThreadStopper {
 public:
  static constexpr size_t kMaxThreads = 1024;

  // Stops every thread but the caller. Threads found inside the runtime (they may hold a
  // table lock) are let go and asked again until they are caught outside it. Threads that
  // have exited or block the stop signal (memtrack's own thread among them) are not waited
  // for; the others for about a second at most.
  void stop_all();
  // Lets them run again and waits until each has left the handler.
  void resume_all();

  size_t count() const { return count_; }
  // How many threads could take the signal but did not answer within the second.
  size_t waited_out() const { return waited_out_; }
  const StoppedThread& thread(size_t i) const { return threads_[i]; }

 private:
  StoppedThread threads_[kMaxThreads];
  size_t count_ = 0;
  size_t waited_out_ = 0;
};

// At detach (an attached runtime): the default action back for the stop signal, if memtrack
// installed its handler and no thread can still take the signal late (every one it was sent
// to took it). False if the handler stays.
bool release_stop_signal();

}  // namespace memtrack::rt
