// The entry check every hook starts with: is this call the program's (record it), the
// runtime's own (pass it through), or one made while the real functions are being resolved
// (serve it from the bootstrap arena)? Runtime-safe: no malloc.
#pragma once

#include <cstdint>

namespace memtrack::rt {

enum class Entry {
  kProgram,    // a call of the program: record it
  kRuntime,    // the calling thread is inside the runtime: forward it untouched
  kBootstrap,  // the thread is resolving the real functions (dlsym may allocate)
};

// Classifies the current call, finishing start-up first if it has not happened yet (the
// first allocation usually comes before the library constructor). Thread safe.
Entry enter();

// kBootstrap: the caller must serve the request from the bootstrap arena.
inline bool must_bootstrap() {
  return enter() == Entry::kBootstrap;
}

// True if a descriptor call just made for the program should change the table: the caller
// (the hook's return address) is not the runtime itself, the call is the program's (enter),
// and track_fds is on. Keeps errno.
bool fd_tracking(uintptr_t caller);

// Keeps errno across the work a hook does after its real call.
class ErrnoKeeper {
 public:
  ErrnoKeeper();
  ~ErrnoKeeper();
  ErrnoKeeper(const ErrnoKeeper&) = delete;
  ErrnoKeeper& operator=(const ErrnoKeeper&) = delete;

 private:
  int saved_;
};

}  // namespace memtrack::rt

// The return address of the hook: where the program (or the runtime) called it.
#define MEMTRACK_CALLER reinterpret_cast<uintptr_t>(__builtin_return_address(0))
// The hook's own frame address, where the stack capture of an allocation starts leaving the
// runtime's frames (record/record.h).
#define MEMTRACK_HOOK_FRAME reinterpret_cast<uintptr_t>(__builtin_frame_address(0))
