// Result files -> Report -> text/JSON, and the exit-status policy.
#include "cli/pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "report/build_report.h"
#include "report/json_renderer.h"
#include "report/leak_kinds.h"
#include "report/result_reader.h"
#include "report/suppressions.h"
#include "report/text_renderer.h"
#include "symbolize/symbolizer.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

namespace memtrack::cli {
namespace {

// The main process left no result file: killed by a signal, or it exec'd a program that
// memtrack does not follow.
report::ProcessReport missing_main_report(const MainProcess& main) {
  report::ProcessReport p;
  p.pid = main.pid;
  p.ppid = static_cast<uint32_t>(getpid());
  p.command = main.command;
  p.exit = main.exit;
  p.has_leak_data = false;
  if (main.exit.how == report::ExitInfo::How::kSignal) {
    p.notes.push_back("no leak data: the process was killed by signal " +
                      std::to_string(main.exit.signal) + " before memtrack could write its report");
  } else {
    p.notes.push_back(
        "no leak data: the process wrote no result file (it may have replaced "
        "itself with exec while --trace-children=no)");
  }
  return p;
}

// waitpid's status is authoritative, but it cannot tell _exit from exit: keep the runtime's
// record when both agree on the status.
void merge_exit(const report::ExitInfo& waited, report::ExitInfo& recorded) {
  bool same_status = waited.how == report::ExitInfo::How::kExit &&
                     (recorded.how == report::ExitInfo::How::kExit ||
                      recorded.how == report::ExitInfo::How::kUnderscoreExit) &&
                     recorded.code == waited.code;
  if (!same_status) recorded = waited;
}

}  // namespace

std::string expand_pid(const std::string& pattern, uint32_t pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

bool use_color(const Config& config) {
  switch (config.color) {
    case Config::Color::kAlways:
      return true;
    case Config::Color::kNever:
      return false;
    case Config::Color::kAuto:
      break;
  }
  const char* no_color = getenv("NO_COLOR");
  const char* term = getenv("TERM");
  return config.log_file.empty() && isatty(STDERR_FILENO) &&
         (no_color == nullptr || no_color[0] == '\0') &&
         (term == nullptr || std::string(term) != "dumb");
}

// Processes of one program (fork children) share their module map; they share a symbolizer
// so each address is symbolized once.
std::string module_key(const std::vector<report::RawModule>& modules) {
  std::string key;
  for (const report::RawModule& m : modules) {
    key += m.path + "@" + std::to_string(m.load_bias) + (m.unloaded ? "u;" : ";");
  }
  return key;
}

report::Suppressions load_suppressions(const Config& config) {
  report::Suppressions all;
  for (const std::string& path : config.suppressions) all.append(report::Suppressions::load(path));
  return all;
}

report::Report build_report(const std::vector<std::string>& result_files,
                            const report::Suppressions& suppressions,
                            const std::optional<MainProcess>& main, bool* had_errors) {
  *had_errors = false;
  std::vector<report::ResultFile> files;
  for (const std::string& path : result_files) {
    try {
      files.push_back(report::read_result_file(path));
    } catch (const Error& e) {
      std::cerr << "memtrack: error: " << e.what() << "\n";
      *had_errors = true;
    }
  }
  uint32_t main_pid = main ? main->pid : 0;
  std::stable_sort(files.begin(), files.end(), [&](const auto& a, const auto& b) {
    if ((a.pid == main_pid) != (b.pid == main_pid)) return a.pid == main_pid;
    return a.pid < b.pid;
  });
  report::Report report;
  if (main && (files.empty() || files.front().pid != main_pid)) {
    report.processes.push_back(missing_main_report(*main));
  }
  std::map<std::string, std::unique_ptr<symbolize::Symbolizer>> symbolizers;
  for (report::ResultFile& file : files) {
    auto& symbolizer = symbolizers[module_key(file.modules)];
    if (!symbolizer) symbolizer = std::make_unique<symbolize::Symbolizer>(file.modules);
    if (main && file.pid == main_pid) merge_exit(main->exit, file.exit);
    report.processes.push_back(report::build_process_report(
        file,
        [&](uint64_t address, bool is_return) -> const std::vector<report::Frame>& {
          return symbolizer->symbolize(address, is_return);
        },
        symbolizer->notes(), suppressions));
  }
  return report;
}

void write_outputs(const report::Report& report, const Config& config, uint32_t main_pid,
                   bool text_to_stdout) {
  report::TextOptions text_options;
  // On stdout (snapshot) colour only when asked: its output is usually piped or saved.
  text_options.color = text_to_stdout ? config.color == Config::Color::kAlways : use_color(config);
  text_options.gen_suppressions = config.gen_suppressions;
  text_options.version = MEMTRACK_VERSION;
  text_options.show_kinds = config.show_leak_kinds;
  report::JsonOptions json_options;
  json_options.show_kinds = config.show_leak_kinds;
  if (config.log_file.empty()) {
    report::render_text(report, text_to_stdout ? std::cout : std::cerr, text_options);
  } else {
    std::string path = expand_pid(config.log_file, main_pid);
    std::ofstream out(path, config.expire_ms > 0 ? std::ios::app : std::ios::trunc);
    if (!out) throw Error("cannot write the log file " + path);
    report::render_text(report, out, text_options);
  }
  if (config.json_file == "-") {
    report::render_json(report, std::cout, MEMTRACK_VERSION, json_options);
  } else if (!config.json_file.empty()) {
    std::string path = expand_pid(config.json_file, main_pid);
    std::ofstream out(path);
    if (!out) throw Error("cannot write the JSON report " + path);
    report::render_json(report, out, MEMTRACK_VERSION, json_options);
  }
}

int exit_status(const report::Report& report, const Config& config, int program_status) {
  if (config.error_exitcode == 0) return program_status;
  for (const report::ProcessReport& p : report.processes) {
    if (!p.errors.empty() || !p.resource_sites.empty()) return config.error_exitcode;
    if (report::has_leaks_of_kinds(p, config.errors_for_leak_kinds)) return config.error_exitcode;
  }
  return program_status;
}

}  // namespace memtrack::cli
