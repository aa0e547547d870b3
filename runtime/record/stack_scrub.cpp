// Clearing the recording path's leftovers on a program-made stack (stack_scrub.h).
// Runtime-safe: no malloc, except pthread_getattr_np's, inside the runtime scope.
#include "runtime/record/stack_scrub.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "runtime/alloc_guard.h"
#include "runtime/record/peak.h"
#include "runtime/runtime.h"

namespace memtrack::rt {

namespace {

// How far below the hook's frame the recording of a block goes: the record, the allocation
// table or heap, the live-bytes counter (measured: about 300 bytes on x86-64; the stack's
// capture, which goes deeper, runs before the block exists). The heap profile's and the event
// log's writes, which go deeper still, are not covered (docs/runtime.md, "Reachability").
constexpr size_t kScrubBytes = 1024;

}  // namespace

void learn_thread_stack() {
  publish_when_thread_exits();  // the thread's first recorded block is a good time (peak.h)
  RuntimeScope scope;
  AllowAllocation allowed("pthread_getattr_np");  // its cpuset; the main thread's maps file
  uintptr_t low = 0;
  uintptr_t size = ~uintptr_t{0};  // unknown: every stack counts as the thread's own
  // No signal handler runs while glibc's allocator works for it here: one that allocates
  // would go to glibc too (it finds the thread inside the runtime) and wait for the arena
  // lock this thread holds. Once per thread; pending signals arrive right after.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* address = nullptr;
    size_t bytes = 0;
    if (pthread_attr_getstack(&attr, &address, &bytes) == 0 && bytes != 0) {
      low = reinterpret_cast<uintptr_t>(address);
      size = bytes;
    }
    pthread_attr_destroy(&attr);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  t_thread.stack_low = low;
  t_thread.stack_size = size;
}

// The array lies below this function's frame, which lies where the recording path's frames
// were: the hook called both from the same frame. Volatile stores rather than a call to
// memset: a call made the compiler keep the array's address in a callee-saved register, whose
// caller's value (there: the new block's address) it then saved at the top of this frame,
// above the array, where nothing cleared it (tests/memcheck's coroutine_stack caught it).
__attribute__((noinline)) void scrub_below_caller() {
  alignas(sizeof(uintptr_t)) char area[kScrubBytes];
  auto* words = reinterpret_cast<volatile uintptr_t*>(area);
  for (size_t i = 0; i < kScrubBytes / sizeof(uintptr_t); ++i) words[i] = 0;
}

}  // namespace memtrack::rt
