// The bounded per-process RSS history (history.h).
#include "ui/history.h"

#include <algorithm>
#include <cmath>

namespace memtrack::ui {

void History::add(uint32_t pid, uint64_t start_ticks, double seconds, uint64_t rss_kb) {
  Series& s = processes_[pid];
  if (s.start_ticks != start_ticks) {
    s = Series();
    s.start_ticks = start_ticks;
  }
  s.seen = true;
  HistoryPoint point{static_cast<float>(seconds),
                     static_cast<uint32_t>(std::min<uint64_t>(rss_kb, UINT32_MAX))};
  s.fine.push_back(point);
  if (s.fine.size() > kFinePoints) s.fine.pop_front();
  // The 10-second bucket a point falls in: a new bucket closes the previous one.
  if (s.bucket_open &&
      std::floor(point.seconds / kCoarseSeconds) != std::floor(s.bucket.seconds / kCoarseSeconds)) {
    s.coarse.push_back(s.bucket);
    if (s.coarse.size() > kCoarsePoints) s.coarse.pop_front();
    s.bucket_open = false;
  }
  if (!s.bucket_open || point.rss_kb > s.bucket.rss_kb) {
    s.bucket = {s.bucket_open ? s.bucket.seconds : point.seconds, point.rss_kb};
    s.bucket_open = true;
  }
}

void History::end_sample() {
  for (auto it = processes_.begin(); it != processes_.end();) {
    if (!it->second.seen) {
      it = processes_.erase(it);
    } else {
      it->second.seen = false;
      ++it;
    }
  }
}

std::vector<HistoryPoint> History::points(uint32_t pid) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return {};
  const Series& s = it->second;
  float first_fine = s.fine.empty() ? INFINITY : s.fine.front().seconds;
  std::vector<HistoryPoint> out;
  for (const HistoryPoint& p : s.coarse) {
    if (p.seconds < first_fine) out.push_back(p);
  }
  out.insert(out.end(), s.fine.begin(), s.fine.end());
  return out;
}

std::vector<uint32_t> History::recent_rss_kb(uint32_t pid, size_t n) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return {};
  const std::deque<HistoryPoint>& fine = it->second.fine;
  std::vector<uint32_t> out;
  for (size_t i = fine.size() > n ? fine.size() - n : 0; i < fine.size(); ++i) {
    out.push_back(fine[i].rss_kb);
  }
  return out;
}

}  // namespace memtrack::ui
