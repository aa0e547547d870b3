// The runtime's per-thread state (thread_state.h). Runtime-safe: no malloc.
#include "runtime/thread_state.h"

namespace memtrack::rt {

__thread ThreadState t_thread;

}  // namespace memtrack::rt
