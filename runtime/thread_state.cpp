// The runtime's per-thread state (thread_state.h). Runtime-safe: no malloc.
#include "runtime/thread_state.h"

namespace memtrack::rt {

__thread ThreadState t_thread;
#if MEMTRACK_ATTACH_RUNTIME
core::HeapThread g_no_heap_thread;
#endif

}  // namespace memtrack::rt
