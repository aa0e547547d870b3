// Reports for processes without leak data: why each one has none, as exactly as memtrack knows.
#include "cli/no_data.h"

#include <signal.h>
#include <unistd.h>

#include <optional>
#include <set>

#include "cli/launcher.h"
#include "cli/preflight.h"
#include "report/process_order.h"

namespace memtrack::cli {
namespace {

report::ProcessReport no_data_report(uint32_t pid, uint32_t ppid,
                                     const std::vector<std::string>& command,
                                     const report::ExitInfo& exit, const std::string& reason,
                                     const std::string& note) {
  report::ProcessReport p;
  p.pid = pid;
  p.ppid = ppid;
  p.command = command;
  p.exit = exit;
  p.has_leak_data = false;
  p.no_data_reason = reason;
  p.notes.push_back(note);
  return p;
}

std::string killed_note(const report::ExitInfo& exit) {
  return "no leak data: killed by signal " + std::to_string(exit.signal) +
         " before memtrack could write its report";
}

// The reason for a process that ended (or exec'd) without a result file, when nothing more
// exact is known.
std::pair<std::string, std::string> ended_without_report(const NoDataFacts& facts) {
  if (facts.exit_report_disabled) {
    return {"report_at_exit_off",
            "no leak data: MEMTRACK_OPTIONS sets report_at_exit=0, so it wrote no report"};
  }
  if (!facts.trace_children) {
    return {"exec_not_followed",
            "no leak data: it ended without writing its report: it exec'd a program memtrack "
            "does not follow (--trace-children=no), or it was killed by a signal (SIGKILL)"};
  }
  return {"no_result_file",
          "no leak data: it ended without writing its report: killed by a signal (SIGKILL), "
          "or it exec'd a program LD_PRELOAD cannot reach (static, setuid, or run with a "
          "cleared environment)"};
}

// A forked copy of its parent that never exec'd and left no report: listed, not a failure.
report::ProcessReport forked_copy_report(const StartedProcess& p, const report::ExitInfo& exit) {
  report::ProcessReport report = no_data_report(
      p.pid, p.ppid, p.command, exit, "forked_copy",
      "no leak data: a fork of process " + std::to_string(p.ppid) +
          " that never exec'd ended without its report (killed by SIGKILL, as debuggers "
          "kill their probes); not counted as a failure");
  report.no_data_expected = true;
  return report;
}

// The program a process exec'd (or was spawned to run) when LD_PRELOAD cannot reach it, as
// the marker's command names it: a path, or a name looked up in PATH.
std::optional<std::string> untrackable_command(const std::vector<std::string>& command) {
  if (command.empty() || command.front().empty()) return std::nullopt;
  std::string program = command.front();
  if (program.find('/') == std::string::npos) {
    try {
      program = resolve_program(program);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  if (access(program.c_str(), F_OK) != 0) return std::nullopt;
  return untrackable_reason(program);
}

report::ProcessReport missing_descendant_report(const StartedProcess& p, const NoDataFacts& facts) {
  using Origin = StartedProcess::Origin;
  auto reaped = facts.reaped.find(p.pid);
  if (reaped == facts.reaped.end() && !facts.kept_dir.empty() &&
      kill(static_cast<pid_t>(p.pid), 0) == 0) {
    report::ExitInfo running;
    running.how = report::ExitInfo::How::kRunning;
    return no_data_report(p.pid, p.ppid, p.command, running, "still_running",
                          "no leak data yet: it is still running; its report will be written to " +
                              facts.kept_dir + "/memtrack." + std::to_string(p.pid) +
                              ".mtr when it ends (render it with: memtrack report " +
                              facts.kept_dir + ")");
  }
  report::ExitInfo exit = reaped != facts.reaped.end() ? reaped->second : report::ExitInfo{};
  if (p.origin == Origin::kForked) return forked_copy_report(p, exit);
  if (p.origin == Origin::kSpawned || p.origin == Origin::kExec) {
    if (std::optional<std::string> why = untrackable_command(p.command)) {
      return no_data_report(p.pid, p.ppid, p.command, exit, "not_trackable",
                            "no leak data: " + *why);
    }
  }
  if (reaped != facts.reaped.end() && exit.how == report::ExitInfo::How::kSignal) {
    return no_data_report(p.pid, p.ppid, p.command, exit, "killed", killed_note(exit));
  }
  auto [reason, note] = ended_without_report(facts);
  return no_data_report(p.pid, p.ppid, p.command, exit, reason, note);
}
}  // namespace

// The main process left no result file.
report::ProcessReport missing_main_report(const MainProcess& main) {
  uint32_t ppid = static_cast<uint32_t>(getpid());
  if (main.exit.how == report::ExitInfo::How::kSignal) {
    return no_data_report(main.pid, ppid, main.command, main.exit, "killed",
                          killed_note(main.exit));
  }
  if (!main.facts.untrackable.empty()) {
    return no_data_report(main.pid, ppid, main.command, main.exit, "not_trackable",
                          "no leak data: " + main.facts.untrackable);
  }
  auto [reason, note] = ended_without_report(main.facts);
  return no_data_report(main.pid, ppid, main.command, main.exit, reason, note);
}

void add_processes_without_data(report::Report& report, const std::vector<StartedProcess>& started,
                                const NoDataFacts& facts, uint32_t main_pid) {
  std::set<uint32_t> reported;
  for (const report::ProcessReport& p : report.processes) reported.insert(p.pid);
  for (const StartedProcess& p : started) {
    if (p.pid == main_pid || reported.contains(p.pid)) continue;
    report.processes.push_back(missing_descendant_report(p, facts));
  }
  report::sort_by_start(report.processes, main_pid);
}

}  // namespace memtrack::cli
