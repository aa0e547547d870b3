// The private directory the runtime writes result files into (mode 0700): temporary and
// removed afterwards, or the --keep-results directory, kept.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace memtrack::cli {

class ResultDir {
 public:
  // `keep` empty: a new temporary directory under $TMPDIR (or /tmp). Otherwise `keep` is
  // created if needed and kept. Throws Error if it cannot be created.
  explicit ResultDir(const std::string& keep);
  ~ResultDir();
  ResultDir(const ResultDir&) = delete;
  ResultDir& operator=(const ResultDir&) = delete;

  const std::string& path() const { return path_; }

  // Result files (memtrack.PID.mtr) written since this object was created, sorted.
  std::vector<std::string> new_result_files() const;

 private:
  std::vector<std::string> list() const;

  std::string path_;
  bool temporary_ = false;
  std::set<std::string> existing_;  // files already in a kept directory
};

}  // namespace memtrack::cli
