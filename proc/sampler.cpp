// The sampler: one pass over /proc plus the per-process RSS history.
#include "proc/sampler.h"

#include <time.h>

namespace memtrack::top {
namespace {

double monotonic_seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace

Sampler::Sampler(ProcReader& reader, UserNames& users, SamplerOptions options, Clock clock)
    : reader_(reader),
      users_(users),
      options_(options),
      clock_(clock ? std::move(clock) : Clock(monotonic_seconds)) {}

Snapshot Sampler::sample(const WantThreads& want_threads) {
  double now = clock_();
  if (start_ < 0) start_ = now;
  ++sample_number_;
  Snapshot snapshot;
  snapshot.seconds = now - start_;
  snapshot.with_threads = want_threads != nullptr;
  std::vector<uint32_t> pids = reader_.list_pids();
  snapshot.processes.reserve(pids.size());
  for (uint32_t pid : pids) {
    std::optional<ProcessInfo> info = reader_.read_process(pid, false);
    if (!info) continue;
    ProcessRow row;
    row.info = std::move(*info);
    row.user = row.info.uid ? users_.name(*row.info.uid) : "?";
    if (want_threads && want_threads(row) && !reader_.read_threads(&row.info)) continue;
    account(&row, now);
    snapshot.processes.push_back(std::move(row));
  }
  std::erase_if(history_,
                [this](const auto& entry) { return entry.second.seen_in != sample_number_; });
  return snapshot;
}

void Sampler::account(ProcessRow* row, double now) {
  // A process whose RSS is unknown has no growth: it stays 0 and never "growing".
  uint64_t rss = row->info.rss_kb.value_or(0);
  auto [it, inserted] = history_.try_emplace(row->info.pid);
  History& h = it->second;
  if (inserted || h.start_ticks != row->info.start_ticks) {
    h = History{row->info.start_ticks, now, rss, rss, 0, 0};
  } else {
    h.consecutive_growth = rss > h.last_rss_kb ? h.consecutive_growth + 1 : 0;
    h.last_rss_kb = rss;
  }
  h.seen_in = sample_number_;
  row->growth_kb = static_cast<int64_t>(rss) - static_cast<int64_t>(h.first_rss_kb);
  if (now > h.first_seconds && now - h.first_seconds >= options_.min_rate_seconds) {
    row->kb_per_min = static_cast<double>(row->growth_kb) * 60.0 / (now - h.first_seconds);
  }
  row->growing = options_.growth_samples > 0 && h.consecutive_growth >= options_.growth_samples;
}

}  // namespace memtrack::top
