// Shared state of libmemtrack.so, the preload runtime: the options, the tables, the counters
// and the runtime scope. Defined in runtime.cpp.
// Runtime-safe: nothing declared here allocates through malloc or throws.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/block_records.h"
#include "core/flags.h"
#include "core/stack_depot.h"
#include "runtime/thread_state.h"

namespace memtrack::rt {

// Process-wide counters that the allocation table does not keep itself (see
// core::AllocTotals). Relaxed atomics; none is touched on the common allocation path.
struct Stats {
  std::atomic<uint64_t> peak_live_bytes{0};
  std::atomic<int64_t> published_live_bytes{0};    // the threads' published net changes
  std::atomic<uint64_t> untracked_allocations{0};  // could not be recorded (out of memory)
  std::atomic<uint64_t> untracked_bytes{0};
  // memtrack attach (hooks/attach.h): when it attached, what the program's allocator held
  // then, and the frees of those older blocks since.
  std::atomic<uint64_t> attach_ns{0};
  std::atomic<uint64_t> preexisting_bytes{0};
  std::atomic<uint64_t> preexisting_frees{0};
  std::atomic<uint64_t> preexisting_freed_bytes{0};
};

extern core::Flags g_flags;
extern core::BlockRecords g_allocs;
extern core::StackDepot g_stacks;
extern Stats g_stats;

// True while the calling thread is inside the runtime. Allocation calls made meanwhile (by
// the unwinder, dlsym, the real operator new, ...) go straight to the real allocator and are
// not recorded. Initial-exec TLS: no allocation, no __tls_get_addr call.

class RuntimeScope {
 public:
  RuntimeScope() { ++t_thread.in_runtime; }
  ~RuntimeScope() { --t_thread.in_runtime; }
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;
};

inline bool in_runtime() {
  return t_thread.in_runtime != 0;
}

// The runtime thread's tid (0 if none; live/live_thread.h): leak scans neither stop nor scan
// it.
extern std::atomic<int> g_runtime_thread_tid;

// Start-up (hooks/init.h): 0 = not started, 1 = in progress, 2 = done.
extern std::atomic<int> g_init_state;
inline bool initialized() {
  return g_init_state.load(std::memory_order_acquire) == 2;
}

// How the runtime is in the process: preloaded or linked in from the start, or loaded into a
// running process by `memtrack attach` (hooks/attach.h): dormant until memtrack_attach runs,
// then attached (its hooks are in the modules' GOTs) until it detaches.
enum class Presence : int { kFromStart, kDormant, kAttached, kDetached };
extern std::atomic<Presence> g_presence;
inline Presence presence() {
  return g_presence.load(std::memory_order_acquire);
}
// Attached to a running process: blocks from before are not in the tables.
inline bool attached() {
  return presence() == Presence::kAttached;
}
// This build is libmemtrack_attach.so, the library memtrack attach loads into a running
// process: its constructors do nothing, and the runtime waits for memtrack_attach.
#if MEMTRACK_ATTACH_RUNTIME
inline constexpr bool kAttachRuntime = true;
#else
inline constexpr bool kAttachRuntime = false;
#endif

// pid of this process image, updated in the fork child handler. A differing getpid() means
// a vfork child that shares our memory.
extern std::atomic<int> g_pid;

// Set in a forked child when silent_after_fork is on: this process image writes nothing
// (no start marker, report, live report or error line). An exec starts a new image, which
// is reported again.
extern std::atomic<bool> g_silent;
inline bool silenced() {
  return g_silent.load(std::memory_order_relaxed);
}

}  // namespace memtrack::rt
