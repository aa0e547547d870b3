// Start order of processes (process_order.h).
#include "report/process_order.h"

#include <map>
#include <set>
#include <tuple>

namespace memtrack::report {

// Kahn's topological sort with the lowest (first, pid) key taken first among the processes
// whose parent is listed or absent.
std::vector<size_t> start_order(const std::vector<ProcessIds>& processes, uint32_t first_pid) {
  size_t n = processes.size();
  std::map<uint32_t, size_t> by_pid;
  for (size_t i = 0; i < n; ++i) by_pid.emplace(processes[i].pid, i);
  std::vector<std::vector<size_t>> children(n);
  std::vector<bool> waits(n, false);
  for (size_t i = 0; i < n; ++i) {
    auto parent = by_pid.find(processes[i].ppid);
    if (parent == by_pid.end() || parent->second == i) continue;
    children[parent->second].push_back(i);
    waits[i] = true;
  }
  using Key = std::tuple<bool, uint32_t, size_t>;  // not first, pid, index
  auto key = [&](size_t i) { return Key{processes[i].pid != first_pid, processes[i].pid, i}; };
  std::set<Key> ready;
  std::set<Key> unlisted;
  for (size_t i = 0; i < n; ++i) {
    unlisted.insert(key(i));
    if (!waits[i]) ready.insert(key(i));
  }
  std::vector<size_t> order;
  order.reserve(n);
  while (!unlisted.empty()) {
    // Empty with processes left: they wait on each other (a cycle); the lowest goes first.
    Key next = ready.empty() ? *unlisted.begin() : *ready.begin();
    ready.erase(next);
    size_t i = std::get<2>(next);
    unlisted.erase(next);
    order.push_back(i);
    for (size_t child : children[i]) {
      if (unlisted.contains(key(child))) ready.insert(key(child));
    }
  }
  return order;
}

}  // namespace memtrack::report
