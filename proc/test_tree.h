// Test-only helpers for the memtrack top unit tests: a temporary /proc-like tree, the
// committed fixture tree, and a ProcFiles that injects errors by path.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "proc/proc_files.h"

namespace memtrack::top::testing {

// A directory under $TMPDIR (or /tmp), removed with everything in it at destruction.
class TempTree {
 public:
  TempTree() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "memtrack-top-test-XXXXXX").string();
    root_ = mkdtemp(pattern.data());
  }
  ~TempTree() { std::filesystem::remove_all(root_); }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::string& root() const { return root_; }

  // Writes root/relative (creating directories), replacing what was there.
  void write(const std::string& relative, const std::string& content) const {
    std::filesystem::path path = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  }
  void remove(const std::string& relative) const {
    std::filesystem::remove_all(std::filesystem::path(root_) / relative);
  }

 private:
  std::string root_;
};

// tests/top/fixtures/proc (see make_fixture.py there).
inline std::string fixture_root() {
  return MEMTRACK_SOURCE_DIR "/tests/top/fixtures/proc";
}

// Reads the real files, except that the paths in `errors` fail with the given status: how
// the tests get EACCES deterministically even when they run as root.
class FaultyProcFiles : public ProcFiles {
 public:
  using ProcFiles::ProcFiles;
  std::map<std::string, ReadStatus> errors;

  ReadStatus read(const std::string& relative, std::string* out) override {
    auto it = errors.find(relative);
    if (it == errors.end()) return ProcFiles::read(relative, out);
    out->clear();
    return it->second;
  }
  ReadStatus list_numeric(const std::string& relative, std::vector<uint32_t>* out) override {
    auto it = errors.find(relative);
    if (it == errors.end()) return ProcFiles::list_numeric(relative, out);
    out->clear();
    return it->second;
  }
};

// A stat line with the given fields and plausible others (proc(5) layout).
inline std::string stat_line(uint32_t pid, const std::string& comm, char state = 'S',
                             uint32_t ppid = 1, uint32_t flags = 0, uint64_t utime = 0,
                             uint64_t stime = 0, uint32_t threads = 1, uint64_t start = 1000) {
  std::string s = std::to_string(pid) + " (" + comm + ") " + state + " " + std::to_string(ppid) +
                  " 1 1 0 -1 " + std::to_string(flags) + " 0 0 0 0 " + std::to_string(utime) + " " +
                  std::to_string(stime) + " 0 0 20 0 " + std::to_string(threads) + " 0 " +
                  std::to_string(start) + " 1000 10";
  for (int i = 25; i <= 52; ++i) s += " 0";
  return s + "\n";
}

}  // namespace memtrack::top::testing
