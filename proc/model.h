// The data memtrack top shows: one process or thread as read from /proc, and a sampled
// process with its growth. Plain value types; ordinary C++ (allocates).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memtrack::top {

// One thread (a /proc/PID/task/TID entry).
struct ThreadInfo {
  uint32_t tid = 0;
  uint32_t tgid = 0;
  std::string name;        // comm, as the kernel reports it (at most 15 bytes)
  char state = '?';        // R, S, D, Z, T, t, X, I, ...
  uint64_t cpu_ticks = 0;  // utime + stime, in clock ticks (sysconf(_SC_CLK_TCK))
};

// One process. A memory field is nullopt when it could not be read (permission denied,
// file missing): the table shows '-' and JSON null. Kernel threads have no address space:
// their memory fields are 0, not unknown (docs/cli.md).
struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t start_ticks = 0;  // stat field 22: with the pid, identifies the process over time
  char state = '?';
  bool kernel_thread = false;   // PF_KTHREAD in stat's flags
  std::optional<uint32_t> uid;  // effective uid (status "Uid:")
  std::string name;             // comm
  std::string cmdline;          // argv joined by spaces (NULs replaced); "" for kernel threads
  uint32_t num_threads = 0;
  uint64_t cpu_ticks = 0;  // utime + stime of all threads
  std::optional<uint64_t> rss_kb;
  std::optional<uint64_t> pss_kb;
  std::optional<uint64_t> uss_kb;  // Private_Clean + Private_Dirty (smaps_rollup)
  std::optional<uint64_t> swap_kb;
  std::vector<ThreadInfo> threads;  // in tid order; filled only when threads were asked for
};

// A process in one refresh, with what the sampler knows of its history.
struct ProcessRow {
  ProcessInfo info;
  std::string user;                  // name from the uid, else the number, else "?"
  int64_t growth_kb = 0;             // RSS now minus RSS at the first sample of this process
  std::optional<double> kb_per_min;  // growth over the time it was observed; needs 2 samples
  bool growing = false;              // RSS grew in each of the last N samples
};

// One refresh: every process that could be read, in /proc order.
struct Snapshot {
  double seconds = 0;         // since the sampler's first sample
  bool with_threads = false;  // threads were read (for the processes that were wanted)
  std::vector<ProcessRow> processes;
};

// What is shown in the COMMAND column and the JSON "command": the command line, or
// "[name]" when there is none (kernel threads, zombies), as ps does.
std::string display_command(const ProcessInfo& info);

}  // namespace memtrack::top
