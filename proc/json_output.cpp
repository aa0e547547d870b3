// The JSON document of memtrack top --json.
#include "proc/json_output.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace memtrack::top {
namespace {

using nlohmann::ordered_json;

ordered_json optional_kb(const std::optional<uint64_t>& kb) {
  return kb ? ordered_json(*kb) : ordered_json(nullptr);
}

double seconds(uint64_t ticks, uint64_t ticks_per_second) {
  return static_cast<double>(ticks) /
         static_cast<double>(ticks_per_second ? ticks_per_second : 100);
}

ordered_json thread_json(const ThreadInfo& t, uint64_t ticks_per_second) {
  ordered_json out;
  out["tid"] = t.tid;
  out["tgid"] = t.tgid;
  out["name"] = t.name;
  out["state"] = std::string(1, t.state);
  out["cpu_seconds"] = seconds(t.cpu_ticks, ticks_per_second);
  return out;
}

ordered_json process_json(const ProcessRow& p, uint64_t ticks_per_second) {
  const ProcessInfo& i = p.info;
  ordered_json out;
  out["pid"] = i.pid;
  out["ppid"] = i.ppid;
  out["user"] = p.user;
  out["uid"] = i.uid ? ordered_json(*i.uid) : ordered_json(nullptr);
  out["command"] = display_command(i);
  out["name"] = i.name;
  out["state"] = std::string(1, i.state);
  out["kernel_thread"] = i.kernel_thread;
  out["rss_kb"] = optional_kb(i.rss_kb);
  out["pss_kb"] = optional_kb(i.pss_kb);
  out["uss_kb"] = optional_kb(i.uss_kb);
  out["swap_kb"] = optional_kb(i.swap_kb);
  out["growth_kb"] = p.growth_kb;
  // One decimal is what the data supports (RSS is counted in KiB).
  out["growth_kb_per_min"] =
      p.kb_per_min ? ordered_json(std::round(*p.kb_per_min * 10) / 10) : ordered_json(nullptr);
  out["growing"] = p.growing;
  out["num_threads"] = i.num_threads;
  out["cpu_seconds"] = seconds(i.cpu_ticks, ticks_per_second);
  ordered_json threads = ordered_json::array();
  for (const ThreadInfo& t : i.threads) threads.push_back(thread_json(t, ticks_per_second));
  out["threads"] = std::move(threads);
  return out;
}

}  // namespace

std::string format_json(const std::vector<ViewRow>& rows, uint64_t ticks_per_second) {
  ordered_json processes = ordered_json::array();
  for (const ViewRow& row : rows) {
    if (row.thread == nullptr) processes.push_back(process_json(*row.process, ticks_per_second));
  }
  ordered_json doc;
  doc["version"] = 1;
  doc["processes"] = std::move(processes);
  // Command lines are whatever bytes a process put there: invalid UTF-8 becomes U+FFFD
  // instead of an exception.
  return doc.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace memtrack::top
