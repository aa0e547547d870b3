// The memory-over-time history memtrack ui keeps per process, in bounded memory: the last
// 5 minutes at every sample (1 s apart) and the last 2 hours at one point per 10 s (the
// largest RSS of those 10 s, so a spike is not averaged away). Per process at most
// 300 + 720 points of 8 bytes: 8 KiB; a process that is gone is forgotten.
// Not thread safe (the server guards it with its lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

namespace memtrack::ui {

struct HistoryPoint {
  float seconds = 0;    // since the server started
  uint32_t rss_kb = 0;  // saturates at 4 TiB
};

class History {
 public:
  static constexpr size_t kFinePoints = 300;    // 5 min at 1 s
  static constexpr size_t kCoarsePoints = 720;  // 2 h at 10 s
  static constexpr double kCoarseSeconds = 10;

  // Records the RSS of `pid` (started at `start_ticks`; a new start time is a new process).
  void add(uint32_t pid, uint64_t start_ticks, double seconds, uint64_t rss_kb);

  // Forgets the processes not added since the last call (they are gone).
  void end_sample();

  // The points of `pid`, oldest first: the coarse points older than the fine ones, then
  // the fine ones. Empty for an unknown pid.
  std::vector<HistoryPoint> points(uint32_t pid) const;

  // The RSS of the last `n` samples of `pid` (at most), oldest first: the table's sparkline.
  std::vector<uint32_t> recent_rss_kb(uint32_t pid, size_t n) const;

  size_t process_count() const { return processes_.size(); }

 private:
  struct Series {
    uint64_t start_ticks = 0;
    bool seen = false;
    std::deque<HistoryPoint> fine;
    std::deque<HistoryPoint> coarse;
    HistoryPoint bucket;  // the largest RSS in the current 10 s
    bool bucket_open = false;
  };
  std::unordered_map<uint32_t, Series> processes_;
};

}  // namespace memtrack::ui
