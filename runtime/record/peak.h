// Live and peak byte counts, and the counters as the reports show them. Runtime-safe: no
// malloc.
#pragma once

#include <cstdint>

namespace memtrack::rt {

// The counters as the reports show them, one field per counter of core/stats.inc (the peak's
// precision: see peak.cpp).
struct StatsSnapshot {
#define MEMTRACK_COUNTER(Enumerator, name, description) uint64_t name;
#include "core/stats.inc"
#undef MEMTRACK_COUNTER
};
StatsSnapshot snapshot_stats();

// Adds `delta` bytes to the calling thread's net change of live bytes, publishing it (and a
// peak candidate) once it passes a threshold. Called by the allocation and free paths.
void note_live_bytes(int64_t delta);
// Creates the thread-exit hook that publishes a thread's last change. Called once at init.
void init_peak_tracking();

}  // namespace memtrack::rt
