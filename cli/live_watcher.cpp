// The live-report watcher: polls the result directory a few times a second.
#include "cli/live_watcher.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <tuple>
#include <vector>

#include "cli/output_paths.h"
#include "cli/pipeline.h"
#include "cli/write_outputs.h"
#include "report/result_reader.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

namespace memtrack::cli {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(200);

// "live.PID.SEQ.mtr" -> (pid, seq); false for other names.
bool parse_live_name(const std::string& name, uint64_t* pid, uint64_t* seq) {
  if (name.rfind("live.", 0) != 0 || name.size() < 10 || !name.ends_with(".mtr")) return false;
  std::string middle = name.substr(5, name.size() - 9);
  size_t dot = middle.find('.');
  if (dot == std::string::npos) return false;
  try {
    size_t used = 0;
    *pid = std::stoull(middle.substr(0, dot), &used);
    if (used != dot) return false;
    *seq = std::stoull(middle.substr(dot + 1), &used);
    return used == middle.size() - dot - 1;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

LiveWatcher::LiveWatcher(const Config& config, std::string result_dir,
                         report::Suppressions suppressions)
    : config_(config), dir_(std::move(result_dir)), suppressions_(std::move(suppressions)) {
  color_ = use_color(config);
  if (!config.log_file.empty()) {
    // The program's pid is not known yet: %p stays for the exit report's own file name.
    std::string path = config.log_file;
    if (path != "-" && path.find("%p") == std::string::npos) {
      log_.open(path, std::ios::trunc);
      if (!log_) throw Error("cannot write the log file " + path);
    }
  }
  if (!config.live_json.empty()) {
    json_.open(config.live_json, std::ios::trunc);
    if (!json_) throw Error("cannot write the live JSON file " + config.live_json);
  }
}

std::unique_ptr<LiveWatcher> start_live_watcher(const Config& config, const std::string& result_dir,
                                                const report::Suppressions& suppressions) {
  if (config.expire_ms <= 0) return nullptr;
  auto watcher = std::make_unique<LiveWatcher>(config, result_dir, suppressions);
  watcher->start();
  return watcher;
}

LiveWatcher::~LiveWatcher() {
  stop();
}

void LiveWatcher::start() {
  thread_ = std::thread([this] { run(); });
}

void LiveWatcher::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  poll_once();  // what the processes wrote last
}

void LiveWatcher::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    poll_once();
    lock.lock();
    wake_.wait_for(lock, kPollInterval, [this] { return stopping_; });
  }
}

void LiveWatcher::poll_once() {
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, error)) {
    std::string name = entry.path().filename().string();
    uint64_t pid = 0;
    uint64_t seq = 0;
    if (!done_.contains(name) && parse_live_name(name, &pid, &seq)) {
      found.emplace_back(pid, seq, entry.path().string());
    }
  }
  std::sort(found.begin(), found.end());
  for (const auto& [pid, seq, path] : found) {
    done_.insert(std::filesystem::path(path).filename().string());
    handle(path);
  }
}

namespace {

// The live report of one file, or nothing after one error line.
std::optional<report::LiveReport> read_live(
    const std::string& path, report::LiveHistory& history,
    std::map<std::string, std::unique_ptr<symbolize::Symbolizer>>& symbolizers,
    const report::Suppressions& suppressions) {
  report::ResultFile file;
  try {
    file = report::read_result_file(path);
  } catch (const Error& e) {
    std::cerr << "memtrack: error: " << e.what() << "\n";
    return std::nullopt;
  }
  if (!file.live) {
    std::cerr << "memtrack: error: " << path << ": not a live report (no live section)\n";
    return std::nullopt;
  }
  auto& symbolizer = symbolizers[module_key(file.modules)];
  if (!symbolizer) symbolizer = std::make_unique<symbolize::Symbolizer>(file.modules);
  return history.add(
      file,
      [&](uint64_t address, bool is_return) -> const std::vector<Frame>& {
        return symbolizer->symbolize(address, is_return);
      },
      suppressions, [&](uint64_t address) { return symbolizer->variable_location(address); });
}

}  // namespace

void LiveWatcher::handle(const std::string& path) {
  std::optional<report::LiveReport> read = read_live(path, history_, symbolizers_, suppressions_);
  if (!read) return;
  const report::LiveReport& live = *read;
  if (log_.is_open()) {
    report::render_live_text(live, log_, false);
  } else if (config_.log_file.empty()) {
    report::render_live_text(live, std::cerr, color_);
  } else if (config_.log_file == "-") {
    report::render_live_text(live, std::cout, false);
    std::cout.flush();
  } else {  // a log file per process (%p): appended to
    std::ofstream out(expand_pid(config_.log_file, live.pid), std::ios::app);
    if (out) report::render_live_text(live, out, false);
  }
  if (json_.is_open() || !config_.html_file.empty()) {
    nlohmann::ordered_json json = report::live_to_json(live, MEMTRACK_VERSION);
    if (json_.is_open()) {
      json_ << json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      json_.flush();
    }
    if (!config_.html_file.empty()) reports_.push_back(std::move(json));
  }
  if (config_.keep_results.empty()) std::filesystem::remove(path);
}

std::vector<nlohmann::ordered_json> read_kept_live_reports(
    const std::string& dir, const report::Suppressions& suppressions) {
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    uint64_t pid = 0;
    uint64_t seq = 0;
    if (parse_live_name(entry.path().filename().string(), &pid, &seq)) {
      found.emplace_back(pid, seq, entry.path().string());
    }
  }
  std::sort(found.begin(), found.end());
  report::LiveHistory history;
  std::map<std::string, std::unique_ptr<symbolize::Symbolizer>> symbolizers;
  std::vector<nlohmann::ordered_json> reports;
  for (const auto& [pid, seq, path] : found) {
    std::optional<report::LiveReport> live = read_live(path, history, symbolizers, suppressions);
    if (live) reports.push_back(report::live_to_json(*live, MEMTRACK_VERSION));
  }
  return reports;
}

}  // namespace memtrack::cli
