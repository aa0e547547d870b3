// Start-up of the runtime: the real functions resolved, the options read, the fork handlers
// and the runtime thread installed. Runtime-safe: no malloc of its own.
#pragma once

#include <atomic>

namespace memtrack::rt {

// Makes sure the real functions are resolved and the options parsed. Returns false only on
// the thread that is doing the initialisation (dlsym may call calloc): that caller must serve
// the request from the bootstrap arena. Thread safe.
bool ensure_initialized();
inline bool initialized() {
  extern std::atomic<int> g_init_state;
  return g_init_state.load(std::memory_order_acquire) == 2;
}

}  // namespace memtrack::rt
