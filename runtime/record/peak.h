// Live and peak byte counts, and the counters as the reports show them. Runtime-safe: no
// malloc.
#pragma once

#include <cstdint>

#include "runtime/thread_state.h"

namespace memtrack::rt {

// The counters as the reports show them, one field per counter of core/stats.inc (the peak's
// precision: see peak.cpp).
struct StatsSnapshot {
#define MEMTRACK_COUNTER(Enumerator, name, description) uint64_t name;
#include "core/stats.inc"
#undef MEMTRACK_COUNTER
};
StatsSnapshot snapshot_stats();

// The change of live bytes a thread keeps to itself before it publishes it (peak.cpp).
constexpr int64_t kPublishBytes = 256 * 1024;
// Publishes the calling thread's change and its peak candidate (peak.cpp).
void publish_live_bytes();
// Makes the calling thread publish its change when it exits, which its first publication
// arranges otherwise: a thread whose change never passes kPublishBytes would take its blocks
// out of the peak when it exits. Called once per thread, off the allocation path (at its
// first recorded block, in every mode: stack_scrub.cpp, learn_thread_stack).
void publish_when_thread_exits();

// Adds `delta` bytes to the calling thread's net change of live bytes, publishing it (and a
// peak candidate) once it passes kPublishBytes either way. Called by the allocation and free
// paths, so inline: out of line, its call cost as much as its work.
inline void note_live_bytes(int64_t delta) {
  int64_t live = t_thread.live_delta + delta;
  t_thread.live_delta = live;
  if (live > t_thread.live_high) t_thread.live_high = live;
  if (live < kPublishBytes && live > -kPublishBytes) [[likely]]
    return;
  publish_live_bytes();
}
// Creates the thread-exit hook that publishes a thread's last change. Called once at init.
void init_peak_tracking();

}  // namespace memtrack::rt
