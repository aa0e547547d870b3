// Reads one process (and optionally its threads) from a /proc tree into a ProcessInfo, from
// stat, status, statm, smaps_rollup, cmdline and task/*/stat. Processes come and go while we
// read: one that vanishes part-way is skipped, never reported half-read. Not thread safe
// (one per sampler; it reuses its buffers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proc/model.h"
#include "proc/proc_files.h"

namespace memtrack::top {

class ProcReader {
 public:
  // `files` must outlive the reader. page_size 0: sysconf(_SC_PAGESIZE).
  explicit ProcReader(ProcFiles& files, uint64_t page_size = 0);

  // The pids in the root directory. Throws memtrack::Error when the root cannot be listed.
  std::vector<uint32_t> list_pids();

  // The process `pid`, or nullopt when it is gone, or its stat file is unreadable or
  // malformed (nothing can be shown without it). Memory the reader may not see (EACCES on
  // smaps_rollup) is nullopt in the result. Threads are read only when with_threads.
  std::optional<ProcessInfo> read_process(uint32_t pid, bool with_threads);

  // Reads the threads of a process that read_process returned without them, into
  // info->threads (in tid order). False when the process is gone.
  bool read_threads(ProcessInfo* info);

  // How many processes read_process skipped since construction, and why.
  uint64_t vanished() const { return vanished_; }
  uint64_t malformed() const { return malformed_; }

 private:
  void read_memory(ProcessInfo* info);
  const std::string& path(uint32_t pid, const char* file);

  ProcFiles& files_;
  uint64_t page_kb_;
  std::string buffer_;
  std::string path_;
  std::vector<uint32_t> tids_;
  uint64_t vanished_ = 0;
  uint64_t malformed_ = 0;
};

}  // namespace memtrack::top
