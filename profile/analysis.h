// One streaming pass over a heap profile: heap over time, the peak and who held it, the top
// sites, temporary allocations, what a time window allocated and kept, and what was still
// live at the end. Memory grows with the number of unique stacks (and, for a raw file, whose
// frees name blocks by address, of blocks live at once), never with the number of events
// (docs/profiling.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profile/event_reader.h"

namespace memtrack::profile {

// Per allocation stack (index = stack id). In the sampled mode (meta.sample_interval_bytes >
// 0) a site with a stack has estimates: each block recorded with its stack stands for
// 1 / p(size) blocks of its size (docs/sampling.md), rounded once per figure; the site
// without a stack (id 0) then holds the blocks not sampled, exactly, and the totals of
// ProfileAnalysis are exact counts of every block.
struct SiteStats {
  uint64_t allocations = 0;
  uint64_t allocated_bytes = 0;
  uint64_t temporary = 0;   // allocations freed as heaptrack's temporaries (profiling.md)
  uint64_t live_bytes = 0;  // at the end of the recording: leaked
  uint64_t live_blocks = 0;
  uint64_t peak_bytes = 0;  // live when the heap was at its peak
  uint64_t peak_blocks = 0;
  uint64_t window_bytes = 0;  // allocated in the window and not freed before its end
  uint64_t window_blocks = 0;
  uint64_t peak_epoch = 0;  // internal: the peak the *_peak fields were last brought up to
  // The sampled mode only: the blocks behind the estimates (recorded with this stack).
  uint64_t sampled_allocations = 0;
  uint64_t sampled_live_blocks = 0;
  uint64_t sampled_peak_blocks = 0;
};

// One point of the heap over time: a bucket of `bucket_us` starting at time_us.
struct SeriesPoint {
  uint64_t time_us = 0;
  uint64_t heap_bytes = 0;      // live at the end of the bucket
  uint64_t heap_max_bytes = 0;  // highest live in the bucket
  uint64_t allocated_bytes = 0;
  uint64_t allocations = 0;
  uint64_t rss_bytes = 0;  // highest RSS sample in the bucket; 0 without one
};

struct AnalyzeOptions {
  std::optional<uint64_t> from_us;  // the time window; unset ends: the recording's
  std::optional<uint64_t> to_us;
  size_t max_points = 100;  // the series has between max_points / 2 and max_points points
  // Only the window's figures are wanted (the window's sites and totals, and `events`: the
  // events read). A packed file is then read from the chunk where the window starts, and no
  // further than its end; every other figure stays zero. Needs from_us or to_us.
  bool window_only = false;
};

struct ProfileAnalysis {
  ProfileMeta meta;
  bool sampled() const { return meta.sample_interval_bytes > 0; }
  uint64_t events = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t reallocs = 0;
  uint64_t allocated_bytes = 0;
  uint64_t temporary = 0;
  uint64_t unknown_frees = 0;  // blocks allocated before the recording started
  uint64_t peak_bytes = 0;
  uint64_t peak_blocks = 0;
  uint64_t peak_time_us = 0;
  uint64_t peak_rss_bytes = 0;
  uint64_t end_time_us = 0;
  uint64_t live_bytes = 0;  // at the end
  uint64_t live_blocks = 0;
  uint64_t window_from_us = 0;
  uint64_t window_to_us = 0;
  bool has_window = false;
  uint64_t skipped_events = 0;  // window_only: events in the chunks before the window's
  uint64_t window_bytes = 0;
  uint64_t window_blocks = 0;
  uint64_t bucket_us = 0;
  std::vector<SeriesPoint> series;
  std::vector<SiteStats> sites;  // index = stack id
};

// Reads `path` (raw or packed) once. Throws Error for unreadable or corrupt input.
ProfileAnalysis analyze_profile(const std::string& path, const AnalyzeOptions& options);

// The analysis of a packed profile that grows while it is analysed: a running program's,
// which memtrack ui packs and checkpoints for every request (ProfilePacker::checkpoint). Its
// chunks never change once written, so each update() reads only the chunks added since the
// one before: a request costs what the program recorded since the last, not all it recorded.
// A window is analysed apart, from the chunks it spans (as with window_only): options.from_us,
// to_us and window_only are ignored here, and update() takes the window.
class GrowingProfileAnalysis {
 public:
  explicit GrowingProfileAnalysis(const AnalyzeOptions& options);
  ~GrowingProfileAnalysis();
  GrowingProfileAnalysis(const GrowingProfileAnalysis&) = delete;
  GrowingProfileAnalysis& operator=(const GrowingProfileAnalysis&) = delete;

  // Reads what `path` has beyond the chunks read so far, and returns the analysis of all of
  // it, with the window [from_us, to_us) if either is given. Throws Error for unreadable or
  // corrupt input (the next update() reads from the start).
  ProfileAnalysis update(const std::string& path, std::optional<uint64_t> from_us = std::nullopt,
                         std::optional<uint64_t> to_us = std::nullopt);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace memtrack::profile
