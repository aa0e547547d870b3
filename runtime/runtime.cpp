// The shared state of the runtime (runtime.h). Runtime-safe: no malloc.
#include "runtime/runtime.h"

namespace memtrack::rt {

core::Flags g_flags;
core::BlockRecords g_allocs;
core::StackDepot g_stacks;
Stats g_stats;
std::atomic<int> g_runtime_thread_tid{0};
std::atomic<int> g_init_state{0};
std::atomic<int> g_pid{0};
std::atomic<bool> g_silent{false};
std::atomic<Presence> g_presence{Presence::kFromStart};

}  // namespace memtrack::rt
