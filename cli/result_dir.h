// The private directory the runtime writes result files into (mode 0700): temporary and
// removed afterwards, or the --keep-results directory, kept. A temporary directory holds an
// `owner` file (memtrack's pid and start time), so a later run can remove the directories of
// memtrack processes that were killed before they could clean up (SIGKILL).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace memtrack::cli {

// A process that wrote a start marker (memtrack.PID.started, runtime/start_marker.h).
struct StartedProcess {
  // Who wrote the start marker (runtime/output/start_marker.h).
  enum class Origin {
    kImage,    // the image itself, running the runtime
    kForked,   // fork: a copy of its parent that has not exec'd
    kSpawned,  // posix_spawn, in the parent: the image may never run the runtime
    kExec,     // an exec, just before it: the image may never run the runtime
  };
  uint32_t pid = 0;
  uint32_t ppid = 0;
  Origin origin = Origin::kImage;
  std::vector<std::string> command;  // as captured when it started (before a later exec)
};

// Reads `dir`'s start markers whose pid has no memtrack.PID.mtr, by pid. Unreadable markers
// are skipped. `skip`: file names to ignore (markers of an earlier run in a kept directory).
std::vector<StartedProcess> started_without_result(const std::string& dir,
                                                   const std::set<std::string>& skip = {});

class ResultDir {
 public:
  // `keep` empty: a new temporary directory under $TMPDIR (or /tmp), after removing stale
  // ones. Otherwise `keep` is created if needed and kept. Throws Error if it cannot be created.
  explicit ResultDir(const std::string& keep);
  ~ResultDir();
  ResultDir(const ResultDir&) = delete;
  ResultDir& operator=(const ResultDir&) = delete;

  const std::string& path() const { return path_; }
  bool temporary() const { return temporary_; }

  // Result files (memtrack.PID.mtr) written since this object was created, sorted.
  std::vector<std::string> new_result_files() const;

  // Reports of on-demand leak checks (check.PID.SEQ.mtr), in the order they were made.
  std::vector<std::string> check_files() const;

  // Processes that started (since this object was created) and have no result file.
  std::vector<StartedProcess> started_without_result() const;

  // Removes the start markers of processes that have a result file, and the settings files
  // (memtrack.PID.settings, runtime/output/settings_file.h) of processes that have ended
  // without removing theirs (killed, or exec'd into an untracked program): a kept directory
  // then holds markers only for processes without a result, and settings only of live ones.
  void remove_answered_markers() const;

  // Keeps a temporary directory after all (processes still running will write into it):
  // the owner file is removed, so no later run deletes it.
  void keep();

  // Until the destructor runs, SIGINT, SIGTERM and SIGHUP remove the temporary directory
  // before ending memtrack as the signal would, and SIGPIPE no longer kills memtrack (writes
  // fail with EPIPE instead). A handler, not SIG_IGN: a program started later gets the
  // default action back at exec.
  void remove_on_signals() const;

 private:
  std::vector<std::string> list(const std::string& suffix) const;

  std::string path_;
  bool temporary_ = false;
  std::set<std::string> existing_;  // files already in a kept directory
};

}  // namespace memtrack::cli
