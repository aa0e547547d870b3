// memtrack run --expire: while the program runs, picks up the live result files its
// processes write (live.PID.SEQ.mtr in the result directory), symbolizes them and writes each
// report as text to the log and as one JSON line to --live-json.
#pragma once

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "report/live_report.h"
#include "report/suppressions.h"
#include "symbolize/symbolizer.h"

namespace memtrack::cli {

// One per run. start() and stop() are called from one thread; the watcher has its own.
class LiveWatcher {
 public:
  // Opens the outputs (the log file is truncated; the exit report is appended to it later).
  // Throws Error if --log-file or --live-json cannot be opened.
  LiveWatcher(const Config& config, std::string result_dir, report::Suppressions suppressions);
  ~LiveWatcher();
  LiveWatcher(const LiveWatcher&) = delete;
  LiveWatcher& operator=(const LiveWatcher&) = delete;

  void start();
  // Handles the files still waiting, then stops the thread.
  void stop();

  // Every report so far as live_to_json() made it, in the order handled, when the HTML
  // report wants them (--html); empty otherwise. Call after stop().
  const std::vector<nlohmann::ordered_json>& reports() const { return reports_; }

 private:
  void run();
  void poll_once();
  void handle(const std::string& path);

  const Config& config_;
  std::string dir_;
  report::Suppressions suppressions_;
  report::LiveHistory history_;
  std::map<std::string, std::unique_ptr<symbolize::Symbolizer>> symbolizers_;
  std::set<std::string> done_;
  std::ofstream log_;
  std::ofstream json_;
  std::vector<nlohmann::ordered_json> reports_;
  bool color_ = false;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

// The live reports a run kept in DIR (--keep-results: live.PID.SEQ.mtr), as live_to_json()
// makes them, each process's in sequence order, for memtrack report --html. Files that cannot
// be read are skipped after one "memtrack: error:" line each.
std::vector<nlohmann::ordered_json> read_kept_live_reports(
    const std::string& dir, const report::Suppressions& suppressions);

// memtrack run's and memtrack attach's: a started watcher of `result_dir` when --expire is
// given, else none. Throws Error as the constructor does.
std::unique_ptr<LiveWatcher> start_live_watcher(const Config& config, const std::string& result_dir,
                                                const report::Suppressions& suppressions);

}  // namespace memtrack::cli
