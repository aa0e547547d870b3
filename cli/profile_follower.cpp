// Packing heap profiles while the program runs (see profile_follower.h).
#include "cli/profile_follower.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "cli/output_paths.h"
#include "common/error.h"
#include "profile/packer.h"
#include "report/text_format.h"

namespace memtrack::cli {
namespace {

constexpr const char* kRawPrefix = "profile.";
constexpr const char* kRawSuffix = ".raw";
// How often the thread looks for what the runtime appended: a 1 MiB buffer takes the
// runtime 5-20 ms of allocations to fill on the workloads of make compare.
constexpr auto kPollInterval = std::chrono::milliseconds(20);

struct RawProfile {
  std::string path;
  uint32_t pid = 0;
  std::string image;  // "" for a process's first image, ".2", ".3" for the ones it exec'd
};

// profile.PID.raw, or profile.PID.raw.N for the Nth image of one process.
std::vector<RawProfile> raw_profiles(const std::string& dir) {
  std::vector<RawProfile> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(kRawPrefix, 0) != 0) continue;
    size_t suffix = name.find(kRawSuffix);
    if (suffix == std::string::npos) continue;
    std::string pid = name.substr(std::char_traits<char>::length(kRawPrefix),
                                  suffix - std::char_traits<char>::length(kRawPrefix));
    if (pid.empty() || pid.size() > 9 || !std::all_of(pid.begin(), pid.end(), ::isdigit)) continue;
    found.push_back(RawProfile{entry.path().string(), static_cast<uint32_t>(std::stoul(pid)),
                               name.substr(suffix + std::char_traits<char>::length(kRawSuffix))});
  }
  return found;
}

std::string packed_name(const Config& config, const RawProfile& raw, uint32_t main_pid) {
  std::string name = config.profile_file;
  if (name.find("%p") != std::string::npos) {
    name = expand_pid(name, raw.pid);
  } else if (raw.pid != main_pid) {
    name += "." + std::to_string(raw.pid);
  }
  return name + raw.image;
}

}  // namespace

ProfileFollower::ProfileFollower(const Config& config, std::string result_dir)
    : config_(config), result_dir_(std::move(result_dir)) {}

ProfileFollower::~ProfileFollower() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  for (auto& [key, follow] : follows_) {
    if (follow.packer) follow.packer->abandon();
  }
}

void ProfileFollower::start() {
  if (config_.profile_file.empty()) return;
  thread_ = std::thread([this] { run(); });
}

void ProfileFollower::set_main_pid(uint32_t pid) {
  main_pid_.store(pid, std::memory_order_release);
}

void ProfileFollower::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    if (main_pid_.load(std::memory_order_acquire) != 0) {
      discover();
      step_all();
    }
    lock.lock();
    wake_.wait_for(lock, kPollInterval, [this] { return stop_; });
  }
}

void ProfileFollower::discover() {
  uint32_t main_pid = main_pid_.load(std::memory_order_acquire);
  for (const RawProfile& raw : raw_profiles(result_dir_)) {
    Follow& follow = follows_[Key{raw.pid, raw.image}];
    if (follow.packer || !follow.error.empty()) continue;
    follow.packer =
        std::make_unique<profile::ProfilePacker>(raw.path, packed_name(config_, raw, main_pid));
  }
}

void ProfileFollower::step_all() {
  for (auto& [key, follow] : follows_) {
    if (!follow.packer || !follow.error.empty()) continue;
    try {
      follow.packer->step();
    } catch (const Error& e) {
      follow.error = e.what();
      follow.packer->abandon();
    }
  }
}

bool ProfileFollower::finish() {
  if (config_.profile_file.empty()) return true;
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  discover();
  if (follows_.empty()) {
    std::cerr << "memtrack: warning: no heap profile was recorded (the program was not "
                 "tracked)\n";
  }
  bool ok = true;
  for (auto& [key, follow] : follows_) {
    if (follow.error.empty()) {
      try {
        profile::PackStats stats = follow.packer->finish();
        std::cerr << "memtrack: heap profile of pid " << key.first << ": "
                  << follow.packer->out_path() << " ("
                  << report::count_of(stats.events, "event", "events") << ", "
                  << report::count_of(stats.packed_bytes, "byte", "bytes")
                  << (stats.replaced_by_exec ? "; replaced by the program it exec'd"
                      : stats.complete       ? ""
                                             : "; the process did not end normally")
                  << (stats.missing_events == 0
                          ? ""
                          : "; " + report::count_of(stats.missing_events, "event", "events") +
                                " lost with a thread's buffer")
                  << ")\n";
        follow.packer.reset();  // done: the destructor must not remove it
        continue;
      } catch (const Error& e) {
        follow.error = e.what();
        follow.packer->abandon();
      }
    }
    std::cerr << "memtrack: error: " << follow.error << "\n";
    ok = false;
  }
  return ok;
}

}  // namespace memtrack::cli
