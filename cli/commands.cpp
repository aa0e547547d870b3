// memtrack run and memtrack report.
#include "cli/commands.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/launcher.h"
#include "cli/live_watcher.h"
#include "cli/no_data.h"
#include "cli/output_paths.h"
#include "cli/pipeline.h"
#include "cli/pprof_server.h"
#include "cli/preflight.h"
#include "cli/profile_command.h"
#include "cli/profile_follower.h"
#include "cli/result_dir.h"
#include "cli/write_outputs.h"
#include "report/stack_depth.h"

namespace memtrack::cli {
namespace {

// The runtime appends to the event log (an exec'd image continues its process's log); a
// run starts it empty. A name with %p is one file per process: nothing to empty yet.
void start_trace_log(const std::string& path) {
  if (path.find("%p") != std::string::npos) return;
  std::ofstream log(path, std::ios::trunc);
  if (!log) throw Error("cannot write the trace log " + path);
}

// The reports of memtrack_do_leak_check() calls, rendered before the exit reports.
std::vector<report::ProcessReport> on_demand_checks(const ResultDir& dir,
                                                    const report::Suppressions& suppressions,
                                                    bool* had_errors) {
  bool errors = false;
  report::Report checks = build_report(dir.check_files(), suppressions, std::nullopt, &errors);
  *had_errors = *had_errors || errors;
  std::map<uint32_t, int> count;
  for (report::ProcessReport& check : checks.processes) {
    check.occasion =
        "on-demand leak check " + std::to_string(++count[check.pid]) + " (memtrack_do_leak_check)";
  }
  return std::move(checks.processes);
}

int status_of(const report::ExitInfo& exit) {
  return exit.how == report::ExitInfo::How::kSignal ? 128 + exit.signal : exit.code;
}

// Refuses (or, with --error-for-no-data=no, warns about) a program LD_PRELOAD cannot reach,
// and warns when MEMTRACK_OPTIONS turns the exit report off. Returns the reason the program
// cannot be tracked, if it is run anyway.
std::string check_trackable(const Config& config, const std::string& program) {
  std::optional<std::string> untrackable = untrackable_reason(program);
  if (untrackable && config.error_for_no_data) {
    throw Error(*untrackable + " (--error-for-no-data=no runs it anyway)");
  }
  if (untrackable) std::cerr << "memtrack: warning: " << *untrackable << "\n";
  if (environment_disables_exit_report()) {
    std::cerr << "memtrack: warning: MEMTRACK_OPTIONS sets report_at_exit=0: the program will "
                 "write no leak report (remove report_at_exit=0 to get one)\n";
  }
  return untrackable.value_or("");
}

std::string runtime_options(const Config& config, const ResultDir& dir) {
  std::string options = "result_dir=" + quoted_option_value(dir.path());
  std::string profile = profile_runtime_option(config, dir.path());
  if (!profile.empty()) options += ":" + profile;
  std::string flags = runtime_flag_options(config);
  return flags.empty() ? options : options + ":" + flags;
}

}  // namespace

int run_command(const Config& config) {
  for (const std::string& note : config.lsan_notes) std::cerr << "memtrack: note: " << note << "\n";
  std::string runtime = find_runtime();
  std::string program = resolve_program(config.program.front());  // fail early
  report::Suppressions suppressions = load_suppressions(config);
  check_output_paths(config);
  NoDataFacts facts;
  facts.untrackable = check_trackable(config, program);
  facts.trace_children = config.trace_children;
  facts.exit_report_disabled = environment_disables_exit_report();
  std::optional<report::Report> baseline;
  if (!config.baseline.empty()) baseline = read_baseline(config.baseline);
  ResultDir dir(config.keep_results);
  dir.remove_on_signals();
  if (!config.trace_log.empty()) start_trace_log(config.trace_log);
  std::unique_ptr<LiveWatcher> watcher = start_live_watcher(config, dir.path(), suppressions);
  ProfileFollower profiles(config, dir.path());
  profiles.start();
  std::optional<PprofServerProcess> pprof;
  if (!config.pprof_http.empty()) {
    pprof.emplace(parse_listen_address(config.pprof_http));
    std::cerr << "memtrack: serving the program's heap at " << pprof->url()
              << "/debug/pprof/heap and " << pprof->url() << "/metrics\n";
  }
  LaunchResult launched =
      launch_and_wait(config.program, runtime, runtime_options(config, dir), [&](int pid) {
        profiles.set_main_pid(static_cast<uint32_t>(pid));
        if (pprof) pprof->set_pid(pid);
      });
  if (pprof) pprof->stop();
  bool still_running = false;
  facts.reaped = wait_for_descendants(config.wait_children_ms, &still_running);
  if (watcher) watcher->stop();
  bool profiles_ok = profiles.finish();
  if (still_running) {
    dir.keep();
    facts.kept_dir = dir.path();
  }

  MainProcess main{static_cast<uint32_t>(launched.pid), config.program, launched.exit, facts};
  bool had_errors = false;
  report::Report report = build_report(dir.new_result_files(), suppressions, main, &had_errors, "",
                                       stack_kinds_to_symbolize(config));
  add_processes_without_data(report, dir.started_without_result(), facts, main.pid);
  dir.remove_answered_markers();
  report.checks = on_demand_checks(dir, suppressions, &had_errors);
  for (auto* list : {&report.processes, &report.checks}) {
    for (report::ProcessReport& process : *list) {
      report::limit_stack_depth(process, static_cast<size_t>(config.num_callers));
    }
  }
  bool written =
      write_outputs(report, config, main.pid, false,
                    watcher ? watcher->reports() : std::vector<nlohmann::ordered_json>{});
  if (had_errors || !profiles_ok || !written) return kExitToolFailed;
  if (baseline && check_baseline(*baseline, report, config)) {
    return config.error_exitcode != 0 ? config.error_exitcode : kExitGateFailed;
  }
  return exit_status(report, config, status_of(launched.exit));
}

namespace {

// memtrack report's FILE arguments: files as given, a directory as its result files (sorted).
// `*started`: each directory's processes without a result file. Throws Error for a directory
// with neither.
std::vector<std::string> expand_result_dirs(
    const std::vector<std::string>& paths,
    std::vector<std::pair<std::string, std::vector<StartedProcess>>>* /*out*/ started) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    if (!std::filesystem::is_directory(path)) {
      files.push_back(path);
      continue;
    }
    size_t before = files.size();
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      std::string name = entry.path().filename().string();
      if (name.rfind("memtrack.", 0) == 0 && entry.path().extension() == ".mtr") {
        files.push_back(entry.path().string());
      }
    }
    std::sort(files.begin() + static_cast<std::ptrdiff_t>(before), files.end());
    std::vector<StartedProcess> more = started_without_result(path);
    if (files.size() == before && more.empty()) {
      throw Error(path + " is a directory without result files (memtrack.PID.mtr)");
    }
    started->emplace_back(path, std::move(more));
  }
  return files;
}

}  // namespace

int report_command(const Config& config) {
  if (is_profile_report(config)) return profile_report_command(config);
  check_binary_stdout(config);
  std::vector<std::pair<std::string, std::vector<StartedProcess>>> started;
  std::vector<std::string> files = expand_result_dirs(config.files, &started);
  bool had_errors = false;
  report::Suppressions suppressions = load_suppressions(config);
  report::Report report = build_report(files, suppressions, std::nullopt, &had_errors,
                                       config.sysroot, stack_kinds_to_symbolize(config));
  uint32_t first_pid = report.processes.empty() ? 0 : report.processes.front().pid;
  for (const auto& [dir, processes] : started) {
    NoDataFacts facts;
    facts.kept_dir = dir;  // a process still running will write its report there
    add_processes_without_data(report, processes, facts, first_pid);
  }
  std::vector<nlohmann::ordered_json> live;  // kept by run --expire --keep-results, for --html
  if (!config.html_file.empty()) {
    for (const auto& [dir, processes] : started) {
      for (auto& one : read_kept_live_reports(dir, suppressions)) live.push_back(std::move(one));
    }
  }
  bool written = report.processes.empty() || write_outputs(report, config, first_pid, false, live);
  if (had_errors || !written) return kExitToolFailed;
  return exit_status(report, config, 0);
}

}  // namespace memtrack::cli
