// Takes one snapshot of every process per call and keeps each process's RSS history for the
// growth columns. Growth is counted from the first sample in which the sampler saw the
// process; a pid whose start time changed is a new process (pid reuse) and starts afresh.
// Not thread safe (one per memtrack top).
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>

#include "proc/model.h"
#include "proc/proc_reader.h"
#include "proc/user_names.h"

namespace memtrack::top {

struct SamplerOptions {
  // "growing": RSS grew (strictly) from each sample to the next over the last N samples,
  // so N+1 samples are needed.
  int growth_samples = 5;
  // A rate per minute only once a process has been watched this long: growth over a second
  // or two, scaled to a minute, says nothing (a process starting up reads as GiB/min). The
  // live views (top's table, the ui) wait; a script's --samples chose its own span.
  double min_rate_seconds = 10;
};

class Sampler {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic

  // `reader` and `users` must outlive the sampler. clock null: CLOCK_MONOTONIC.
  Sampler(ProcReader& reader, UserNames& users, SamplerOptions options, Clock clock = nullptr);

  // Which processes' threads to read: each thread costs a file read, so only those that
  // will be shown. Called with the process already read (user name included).
  using WantThreads = std::function<bool(const ProcessRow&)>;

  // Reads every process now (and the threads of those `want_threads` accepts; none when it
  // is null), updates the history (forgetting processes that are gone) and returns the
  // snapshot in /proc order. Throws memtrack::Error when the proc root cannot be listed.
  Snapshot sample(const WantThreads& want_threads);

 private:
  struct History {
    uint64_t start_ticks = 0;
    double first_seconds = 0;
    uint64_t first_rss_kb = 0;
    uint64_t last_rss_kb = 0;
    int consecutive_growth = 0;  // samples in a row in which RSS grew
    uint64_t seen_in = 0;        // the sample number that last saw the process
  };

  void account(ProcessRow* row, double now);

  ProcReader& reader_;
  UserNames& users_;
  SamplerOptions options_;
  Clock clock_;
  double start_ = -1;
  uint64_t sample_number_ = 0;
  std::unordered_map<uint32_t, History> history_;
};

}  // namespace memtrack::top
