// The order processes are listed in: the order they started, as far as their pids and parent
// pids tell it. Ordinary C++; used by the CLI for result files and processes without data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace memtrack::report {

struct ProcessIds {
  uint32_t pid = 0;
  uint32_t ppid = 0;
};

// Indices into `processes` in start order: `first_pid` first (the program memtrack ran; 0 for
// none), then by pid, except that no process comes before its parent when its parent is
// listed. Pids grow until they wrap (/proc/sys/kernel/pid_max), so by pid alone a child
// started after a wrap would be listed before its parent. Without a wrap this is pid order.
// Siblings and unrelated processes stay in pid order (nothing records when they started). A
// cycle of parents (pids reused) is broken at its lowest pid.
std::vector<size_t> start_order(const std::vector<ProcessIds>& processes, uint32_t first_pid);

// Sorts `processes` (anything with `pid` and `ppid` members) into start_order.
template <typename Process>
void sort_by_start(std::vector<Process>& processes, uint32_t first_pid) {
  std::vector<ProcessIds> ids;
  ids.reserve(processes.size());
  for (const Process& p : processes) ids.push_back({p.pid, p.ppid});
  std::vector<Process> sorted;
  sorted.reserve(processes.size());
  for (size_t i : start_order(ids, first_pid)) sorted.push_back(std::move(processes[i]));
  processes = std::move(sorted);
}

}  // namespace memtrack::report
