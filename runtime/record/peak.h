// Live and peak byte counts, and the counters as the reports show them. Runtime-safe: no
// malloc.
#pragma once

#include <cstdint>

namespace memtrack::rt {

// The counters as the reports show them.
struct StatsSnapshot {
  uint64_t allocations;      // tracked and untracked
  uint64_t frees;            // of tracked blocks
  uint64_t bytes_allocated;  // tracked and untracked
  uint64_t live_bytes;       // tracked blocks not freed
  uint64_t peak_live_bytes;  // see peak.cpp for its precision
  uint64_t untracked_allocations;
  uint64_t untracked_bytes;
};
StatsSnapshot snapshot_stats();

// Adds `delta` bytes to the calling thread's net change of live bytes, publishing it (and a
// peak candidate) once it passes a threshold. Called by the allocation and free paths.
void note_live_bytes(int64_t delta);
// Creates the thread-exit hook that publishes a thread's last change. Called once at init.
void init_peak_tracking();

}  // namespace memtrack::rt
