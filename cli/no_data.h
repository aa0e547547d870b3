// Processes without leak data: what memtrack knows about why (a signal, an exec it cannot
// follow, a fork that never exec'd, a process still running) and the report it gives them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/result_dir.h"
#include "report/model.h"

namespace memtrack::cli {

// What memtrack knows about a run that tells why a process has no leak data.
struct NoDataFacts {
  bool trace_children = true;
  bool exit_report_disabled = false;            // MEMTRACK_OPTIONS sets report_at_exit=0
  std::string untrackable;                      // why the program cannot be tracked (run anyway)
  std::map<uint32_t, report::ExitInfo> reaped;  // descendants memtrack reaped (subreaper)
  std::string kept_dir;  // the result directory, kept for processes still running
};

// The process the user started, as the launcher saw it (its exit status is authoritative:
// a process killed by a signal never writes its own result file).
struct MainProcess {
  uint32_t pid = 0;
  std::vector<std::string> command;
  report::ExitInfo exit;
  NoDataFacts facts;
};

// The report of the main process when it left no result file: why, as exactly as known.
report::ProcessReport missing_main_report(const MainProcess& main);

// Adds a report without leak data for every process that wrote a start marker but no result
// file (except the main process, which build_report covers), each with its exact reason
// where memtrack knows it; then orders the processes: the main one first, the others in start
// order (report/process_order.h: by pid, but never before their parent).
void add_processes_without_data(report::Report& report, const std::vector<StartedProcess>& started,
                                const NoDataFacts& facts, uint32_t main_pid);

}  // namespace memtrack::cli
