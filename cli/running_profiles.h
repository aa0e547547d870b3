// memtrack ui's heap profiles of programs still running under memtrack run --profile: the
// ui follows each raw file the runtime appends to with a packer of its own, into a temporary
// file, and checkpoints it for every request (packer.h), so that a request analyses what the
// program recorded up to then and packs only what came since the one before.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/options.h"

namespace memtrack::profile {
class ProfilePacker;
}

namespace memtrack::cli {

// Thread safe: requests come from the HTTP server's threads, and are served one at a time.
class RunningProfiles {
 public:
  explicit RunningProfiles(const Config& config);
  ~RunningProfiles();
  RunningProfiles(const RunningProfiles&) = delete;
  RunningProfiles& operator=(const RunningProfiles&) = delete;

  // The heap profile page's model (profile_page_model) of what `pid` has recorded so far, with
  // "running": true in its profile, and its window from `from_us` to `to_us`. Throws Error
  // naming the problem: no such process, not under memtrack, no heap profile, a corrupt one.
  nlohmann::ordered_json model(uint32_t pid, std::optional<uint64_t> from_us,
                               std::optional<uint64_t> to_us);

  // Closes the files of processes that ended (each holds the raw file, which memtrack run
  // has removed, and the temporary one). Skipped while a request is being served.
  void forget_ended();

 private:
  struct Followed;
  void forget_ended_locked(uint32_t pid, const std::string& raw);

  const Config& config_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Followed>> followed_;  // by raw file, under mutex_
};

}  // namespace memtrack::cli
