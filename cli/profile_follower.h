// `memtrack run --profile=FILE`: packs the raw heap profiles the runtime writes into the
// result directory while the program runs (docs/profiling.md, "How it is recorded"). A thread
// follows each raw file as the runtime appends its full buffers and compresses every chunk as
// soon as it is full, on a core the program is not using, so that at exit only the last chunk
// is left to compress.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "cli/options.h"

namespace memtrack::profile {
class ProfilePacker;
}

namespace memtrack::cli {

// Thread safe: set_main_pid() may come from any thread; the rest from the one that made it.
class ProfileFollower {
 public:
  // Does nothing without --profile.
  ProfileFollower(const Config& config, std::string result_dir);
  // Stops following; packed files not finished (the run failed) are removed.
  ~ProfileFollower();
  ProfileFollower(const ProfileFollower&) = delete;
  ProfileFollower& operator=(const ProfileFollower&) = delete;

  // Starts the thread. It packs nothing until set_main_pid(): the main process's profile
  // goes to FILE, the others' to FILE.PID.
  void start();
  void set_main_pid(uint32_t pid);

  // The processes have ended: packs what is left of every raw file in the result directory
  // into --profile's file (%p: the pid) and says where on stderr. Returns false after a
  // "memtrack: error:" line if one could not be packed.
  bool finish();

 private:
  struct Follow {
    std::unique_ptr<profile::ProfilePacker> packer;
    std::string error;  // the first error; the file is then left alone
  };
  using Key = std::pair<uint32_t, std::string>;  // pid, image suffix ("", ".2", ...)
  void run();
  void discover();  // starts a packer for every raw file not followed yet
  void step_all();

  const Config& config_;
  std::string result_dir_;
  std::atomic<uint32_t> main_pid_{0};
  std::map<Key, Follow> follows_;  // only the thread touches it until finish() joins it
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mutex_
};

}  // namespace memtrack::cli
