// One parser per /proc file (proc(5)). The text is untrusted: processes choose their comm and
// command line, and files can be cut short when a process exits while we read. Parsers never
// throw; what they cannot parse they report as missing. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memtrack::top {

// /proc/PID/stat and /proc/PID/task/TID/stat.
struct StatFields {
  uint32_t pid = 0;
  std::string comm;
  char state = '?';
  uint32_t ppid = 0;
  uint32_t flags = 0;  // PF_* (field 9)
  uint64_t utime = 0;  // clock ticks
  uint64_t stime = 0;
  uint32_t num_threads = 0;
  uint64_t start_ticks = 0;  // field 22: clock ticks after boot
};

// PF_KTHREAD from linux/sched.h: the task is a kernel thread (no address space).
inline constexpr uint32_t kPfKthread = 0x00200000;

// The comm may hold spaces and ')' ("1 (a) b) S 0 ..."), so it runs from the first '(' to
// the last ')'; control characters in it become '?' (prctl(PR_SET_NAME) allows newlines,
// which must not break a table line). nullopt when anything up to field 22 (starttime) is missing
// or not a number.
std::optional<StatFields> try_parse_stat(std::string_view text);

// /proc/PID/status: only the lines memtrack top uses; each is nullopt when absent or
// unparseable (kernel threads and zombies have no Vm* lines).
struct StatusFields {
  std::optional<uint32_t> euid;  // second number of "Uid:"
  std::optional<uint64_t> vm_rss_kb;
  std::optional<uint64_t> vm_swap_kb;
};
StatusFields parse_status(std::string_view text);

// /proc/PID/statm: the second number (resident pages). nullopt when malformed.
std::optional<uint64_t> try_parse_statm_resident_pages(std::string_view text);

// /proc/PID/smaps_rollup (Linux 4.14+). USS as smem defines it: Private_Clean +
// Private_Dirty. nullopt when Pss or a Private_ line is missing (empty file: no mm).
struct RollupFields {
  uint64_t pss_kb = 0;
  uint64_t uss_kb = 0;
  std::optional<uint64_t> swap_kb;
};
std::optional<RollupFields> try_parse_smaps_rollup(std::string_view text);

// /proc/PID/cmdline: NUL-separated argv (a process may rewrite it to one string with
// spaces). Returns the arguments joined by single spaces, trailing NULs dropped, control
// characters (newlines, escapes) replaced by '?' so a command never spans lines or moves the
// cursor. Never truncates.
std::string parse_cmdline(std::string_view bytes);

}  // namespace memtrack::top
