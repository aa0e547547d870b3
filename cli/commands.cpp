// memtrack run and memtrack report.
#include "cli/commands.h"

#include <algorithm>
#include <memory>
#include <fstream>

#include "cli/launcher.h"
#include "cli/live_watcher.h"
#include "cli/pipeline.h"
#include "cli/result_dir.h"
#include "core/flags.h"
#include "report/stack_depth.h"

namespace memtrack::cli {
namespace {

// MEMTRACK_OPTIONS values are quoted so paths may contain ':' or spaces.
std::string quoted(const std::string& value) {
  if (value.find('"') != std::string::npos) {
    throw Error("paths containing '\"' are not supported: " + value);
  }
  return "\"" + value + "\"";
}

// The runtime appends to the event log (an exec'd image continues its process's log); a
// run starts it empty. A name with %p is one file per process: nothing to empty yet.
void start_trace_log(const std::string& path) {
  if (path.find("%p") != std::string::npos) return;
  std::ofstream log(path, std::ios::trunc);
  if (!log) throw Error("cannot write the trace log " + path);
}

int default_max_frames() {
  core::Flags defaults;
  core::set_defaults(&defaults);
  return defaults.max_frames;
}

int status_of(const report::ExitInfo& exit) {
  return exit.how == report::ExitInfo::How::kSignal ? 128 + exit.signal : exit.code;
}

}  // namespace

int run_command(const Config& config) {
  std::string runtime = find_runtime();
  resolve_program(config.program.front());  // fail early, with memtrack's exit codes
  report::Suppressions suppressions = load_suppressions(config);
  ResultDir dir(config.keep_results);
  std::string options = "result_dir=" + quoted(dir.path());
  // The runtime records at least its default depth whatever --num-callers says, so its rule
  // for blocks the C/C++ runtime keeps sees whole stacks; the report cuts them afterwards.
  if (config.num_callers > 0) {
    options += ":max_frames=" + std::to_string(std::max(config.num_callers, default_max_frames()));
  }
  if (!config.trace_children) options += ":follow_exec=0";
  if (config.snapshots) options += ":snapshot_signal=1";
  if (config.halt_on_error) options += ":halt_on_error=1";
  if (!config.track_fds) options += ":track_fds=0";
  if (!config.trace_log.empty()) {
    start_trace_log(config.trace_log);
    options += ":trace_log=" + quoted(config.trace_log);
  }
  std::unique_ptr<LiveWatcher> watcher;
  if (config.expire_ms > 0) {
    options += ":expire_ms=" + std::to_string(config.expire_ms);
    if (config.report_interval_ms > 0) {
      options += ":report_interval_ms=" + std::to_string(config.report_interval_ms);
    }
    watcher = std::make_unique<LiveWatcher>(config, dir.path(), suppressions);
    watcher->start();
  }
  LaunchResult launched = launch_and_wait(config.program, runtime, options);
  if (watcher) watcher->stop();

  MainProcess main{static_cast<uint32_t>(launched.pid), config.program, launched.exit};
  bool had_errors = false;
  report::Report report = build_report(dir.new_result_files(), suppressions, main, &had_errors);
  for (report::ProcessReport& process : report.processes) {
    report::limit_stack_depth(process, static_cast<size_t>(config.num_callers));
  }
  write_outputs(report, config, main.pid);
  if (had_errors) return kExitToolFailed;
  return exit_status(report, config, status_of(launched.exit));
}

int report_command(const Config& config) {
  bool had_errors = false;
  report::Report report =
      build_report(config.files, load_suppressions(config), std::nullopt, &had_errors);
  uint32_t first_pid = report.processes.empty() ? 0 : report.processes.front().pid;
  if (!report.processes.empty()) write_outputs(report, config, first_pid);
  if (had_errors) return kExitToolFailed;
  return exit_status(report, config, 0);
}

}  // namespace memtrack::cli
