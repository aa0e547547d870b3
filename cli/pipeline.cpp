// Result files -> Report -> text/JSON, and the exit-status policy.
#include "cli/pipeline.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "cli/launcher.h"
#include "cli/lsan_environment.h"
#include "cli/preflight.h"
#include "report/build_report.h"
#include "report/collapsed_renderer.h"
#include "report/html_renderer.h"
#include "report/json_renderer.h"
#include "report/junit_renderer.h"
#include "report/leak_kinds.h"
#include "report/pprof_renderer.h"
#include "report/process_order.h"
#include "report/result_reader.h"
#include "report/sarif_renderer.h"
#include "report/speedscope_renderer.h"
#include "report/suppressions.h"
#include "report/text_renderer.h"
#include "report/valgrind_xml_renderer.h"
#include "symbolize/symbolizer.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

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

namespace {

// A file that can be opened for writing: opened without truncating, and removed again if
// this check created it.
void check_writable(const std::string& option, const std::string& path) {
  if (path.empty() || path == "-") return;
  if (path.find("%p") != std::string::npos) {
    std::string dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      throw Error("cannot write " + option + "=" + path + ": directory " + dir + ": " +
                  strerror(errno));
    }
    return;
  }
  bool existed = access(path.c_str(), F_OK) == 0;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot write " + option + "=" + path + ": " + strerror(errno));
  close(fd);
  if (!existed) unlink(path.c_str());
}

}  // namespace

void check_output_paths(const Config& config) {
  check_writable("--log-file", config.log_file);
  check_writable("--json", config.json_file);
  check_writable("--junit", config.junit_file);
  check_writable("--collapsed", config.collapsed_file);
  check_writable("--xml-file", config.xml_file);
  check_writable("--sarif", config.sarif_file);
  check_writable("--pprof", config.pprof_file);
  check_writable("--speedscope", config.speedscope_file);
  check_writable("--html", config.html_file);
  check_writable("--live-json", config.live_json);
  check_writable("--profile", config.profile_file);
  check_writable("--massif", config.massif_file);
  check_binary_stdout(config);
}

void check_binary_stdout(const Config& config) {
  if (config.pprof_file == "-" && isatty(STDOUT_FILENO)) {
    throw Error(
        "the pprof profile is binary and stdout is a terminal: redirect stdout to a "
        "file, or name one with --pprof=FILE");
  }
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
std::string module_key(const std::vector<RawModule>& modules) {
  std::string key;
  for (const RawModule& m : modules) {
    key += m.path + "@" + std::to_string(m.load_bias) + (m.unloaded ? "u;" : ";");
  }
  return key;
}

namespace {

// Module paths as the program saw them, moved under `sysroot` where the file exists there
// (qemu-user's -L maps the program's /lib to ROOT/lib the same way).
void use_sysroot(const std::string& sysroot, std::vector<RawModule>& modules) {
  for (RawModule& m : modules) {
    if (!m.path.starts_with("/")) continue;  // the vDSO
    std::string moved = sysroot + m.path;
    if (std::filesystem::is_regular_file(moved)) m.path = std::move(moved);
  }
}

}  // namespace

report::LeakKinds stack_kinds_to_symbolize(const Config& config) {
  // Suggested suppressions (--gen-suppressions, JSON, HTML) single a group out against every
  // other group's frames; valgrind's XML numbers loss records over all groups; the baseline
  // check compares stacks.
  if (!config.baseline.empty() || config.gen_suppressions != report::GenSuppressions::kNo ||
      !config.json_file.empty() || !config.html_file.empty() || !config.xml_file.empty()) {
    return report::LeakKinds::all();
  }
  report::LeakKinds kinds = report::kDefaultShownKinds;
  if (config.show_leak_kinds.contains(report::LeakKind::kReachable) ||
      config.errors_for_leak_kinds.contains(report::LeakKind::kReachable)) {
    kinds = kinds.with(report::LeakKind::kReachable);
  }
  return kinds;
}

report::Suppressions load_suppressions(const Config& config) {
  report::Suppressions all;
  for (const std::string& path : config.suppressions) all.append(report::Suppressions::load(path));
  return all;
}

report::Report build_report(const std::vector<std::string>& result_files,
                            const report::Suppressions& suppressions,
                            const std::optional<MainProcess>& main, bool* had_errors,
                            const std::string& sysroot, report::LeakKinds stack_kinds) {
  *had_errors = false;
  std::vector<report::ResultFile> files;
  for (const std::string& path : result_files) {
    try {
      files.push_back(report::read_result_file(path));
      if (!sysroot.empty()) use_sysroot(sysroot, files.back().modules);
    } catch (const Error& e) {
      std::cerr << "memtrack: error: " << e.what() << "\n";
      *had_errors = true;
    }
  }
  uint32_t main_pid = main ? main->pid : 0;
  report::sort_by_start(files, main_pid);
  report::Report report;
  if (main && (files.empty() || files.front().pid != main_pid)) {
    report.processes.push_back(missing_main_report(*main));
  }
  std::map<std::string, std::unique_ptr<symbolize::Symbolizer>> symbolizers;
  for (report::ResultFile& file : files) {
    auto& symbolizer = symbolizers[module_key(file.modules)];
    if (!symbolizer) symbolizer = std::make_unique<symbolize::Symbolizer>(file.modules);
    if (main && file.pid == main_pid) merge_exit(main->exit, file.exit);
    // A program written for LeakSanitizer may bring suppressions of its own.
    std::vector<std::string> lsan_notes;
    std::optional<report::Suppressions> own;
    if (!file.lsan_default_options.empty() || !file.lsan_default_suppressions.empty()) {
      own = with_program_lsan_defaults(file, suppressions, &lsan_notes);
    }
    report.processes.push_back(report::build_process_report(
        file,
        [&](uint64_t address, bool is_return) -> const std::vector<Frame>& {
          return symbolizer->symbolize(address, is_return);
        },
        symbolizer->notes(), own ? *own : suppressions, stack_kinds));
    std::vector<std::string>& notes = report.processes.back().notes;
    notes.insert(notes.end(), lsan_notes.begin(), lsan_notes.end());
  }
  return report;
}

namespace {

// Where an output goes when its file cannot be written at the end (disk full, directory
// removed): text a terminal can show goes to stderr; a binary pprof profile, an HTML page or
// speedscope's one-line JSON goes to a file in the temporary directory, named in the error.
enum class Fallback { kStderr, kTempFile };

// Renders into the file at `path`, or, if it cannot be written, where `fallback` says, after
// one line saying why. Returns whether the file was written.
template <typename Render>
[[nodiscard]] bool write_file_or_stderr(const std::string& what, const std::string& path,
                                        std::ios::openmode mode, Render&& render,
                                        Fallback fallback = Fallback::kStderr) {
  {
    std::ofstream out(path, mode);
    if (out) {
      render(out);
      out.flush();
      if (out) return true;
    }
  }
  std::string why = errno != 0 ? strerror(errno) : "write error";
  if (fallback == Fallback::kStderr) {
    std::cerr << "memtrack: error: cannot write the " << what << " " << path << ": " << why
              << "; the " << what << " follows on stderr\n";
    render(std::cerr);
    return false;
  }
  // The format's first word keeps two outputs with one file name (/dev/full) apart.
  std::string tag = what.substr(0, what.find(' '));
  std::transform(tag.begin(), tag.end(), tag.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  const char* tmp = getenv("TMPDIR");
  std::filesystem::path instead =
      std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
      ("memtrack-" + std::to_string(getpid()) + "-" + tag + "-" +
       std::filesystem::path(path).filename().string());
  errno = 0;
  {
    std::ofstream out(instead, std::ios::trunc);
    if (out) {
      render(out);
      out.flush();
      if (out) {
        std::cerr << "memtrack: error: cannot write the " << what << " " << path << ": " << why
                  << "; it was written to " << instead.string() << " instead\n";
        return false;
      }
    }
  }
  std::string why_instead = errno != 0 ? strerror(errno) : "write error";
  std::error_code ignored;
  std::filesystem::remove(instead, ignored);
  std::cerr << "memtrack: error: cannot write the " << what << " " << path << ": " << why
            << ", nor " << instead.string() << ": " << why_instead << "; the " << what
            << " is lost\n";
  return false;
}

// Renders to stdout; false, after one line saying so, if stdout cannot take it.
template <typename Render>
[[nodiscard]] bool write_stdout(const std::string& what, Render&& render) {
  render(std::cout);
  std::cout.flush();
  if (std::cout) return true;
  std::cerr << "memtrack: error: cannot write the " << what << " to stdout\n";
  return false;
}

// -q: the processes with something to report (what valgrind -q keeps: errors and leaks).
report::Report quiet_report(const report::Report& report, report::LeakKinds shown) {
  report::Report quiet;
  auto keep = [&](const report::ProcessReport& p) {
    return !p.errors.empty() || p.crash || !p.resource_sites.empty() ||
           (!p.has_leak_data && !p.no_data_expected) || report::has_leaks_of_kinds(p, shown);
  };
  std::copy_if(report.processes.begin(), report.processes.end(),
               std::back_inserter(quiet.processes), keep);
  std::copy_if(report.checks.begin(), report.checks.end(), std::back_inserter(quiet.checks), keep);
  return quiet;
}

// One more format beside the text and JSON reports: to stdout for "-", or to `file`. Returns
// whether it was written where it was asked for.
template <typename Render>
[[nodiscard]] bool write_format(const char* what, const std::string& file, uint32_t main_pid,
                                Render&& render, Fallback fallback = Fallback::kStderr) {
  if (file == "-") return write_stdout(what, render);
  if (file.empty()) return true;
  errno = 0;
  // A descriptor (--xml-fd) continues where it is: stderr may already hold the text report.
  bool descriptor = file.starts_with("/dev/fd/");
  return write_file_or_stderr(what, expand_pid(file, main_pid),
                              descriptor ? std::ios::app : std::ios::trunc, render, fallback);
}

// valgrind's <vargv>: memtrack's command line without the program and its arguments.
std::vector<std::string> tool_argv(const Config& config) {
  std::vector<std::string> argv = config.memtrack_argv;
  const std::vector<std::string>& program = config.program;
  if (config.command == kRun && argv.size() >= program.size() &&
      std::equal(program.begin(), program.end(), argv.end() - static_cast<long>(program.size()))) {
    argv.resize(argv.size() - program.size());
    if (!argv.empty() && argv.back() == "--") argv.pop_back();
  }
  return argv;
}

// --xml-file: with %p one document per process, as valgrind writes them; else one for all.
bool write_valgrind_xml(const report::Report& report, const Config& config, uint32_t main_pid) {
  if (config.xml_file.empty()) return true;
  report::ValgrindXmlOptions options;
  options.show_kinds = config.show_leak_kinds;
  options.version = MEMTRACK_VERSION;
  options.tool_argv = tool_argv(config);
  if (config.xml_file == "-" || config.xml_file.find("%p") == std::string::npos) {
    return write_format("valgrind XML", config.xml_file, main_pid, [&](std::ostream& out) {
      report::render_valgrind_xml(report, out, options);
    });
  }
  bool written = true;
  for (const report::ProcessReport& p : report.processes) {
    report::Report one;
    one.processes.push_back(p);
    written &= write_format("valgrind XML", config.xml_file, p.pid, [&](std::ostream& out) {
      report::render_valgrind_xml(one, out, options);
    });
  }
  return written;
}

// --sarif: files under --source-root (the working directory) are relative to SRCROOT.
bool write_sarif(const report::Report& report, const Config& config, uint32_t main_pid) {
  if (config.sarif_file.empty()) return true;
  report::SarifOptions options;
  options.show_kinds = config.show_leak_kinds;
  options.version = MEMTRACK_VERSION;
  std::error_code error;
  std::filesystem::path root = config.source_root.empty()
                                   ? std::filesystem::current_path(error)
                                   : std::filesystem::absolute(config.source_root, error);
  options.source_root = error ? "" : root.lexically_normal().string();
  options.information_uri = MEMTRACK_INFORMATION_URI;
  return write_format("SARIF log", config.sarif_file, main_pid,
                      [&](std::ostream& out) { report::render_sarif(report, out, options); });
}

// --junit, --collapsed, --xml-file, --sarif, --pprof, --speedscope and --html.
bool write_other_formats(const report::Report& report, const Config& config, uint32_t main_pid,
                         const std::vector<nlohmann::ordered_json>& live) {
  report::JunitOptions junit_options;
  junit_options.fail_kinds = config.errors_for_leak_kinds;
  bool written = write_format("JUnit report", config.junit_file, main_pid, [&](std::ostream& out) {
    report::render_junit(report, out, junit_options);
  });
  report::CollapsedOptions collapsed_options;
  collapsed_options.show_kinds = config.show_leak_kinds;
  written &= write_format(
      "collapsed stacks", config.collapsed_file, main_pid,
      [&](std::ostream& out) { report::render_collapsed(report, out, collapsed_options); });
  written &= write_valgrind_xml(report, config, main_pid);
  written &= write_sarif(report, config, main_pid);
  report::PprofOptions pprof_options;
  pprof_options.show_kinds = config.show_leak_kinds;
  pprof_options.version = MEMTRACK_VERSION;
  written &= write_format(
      "pprof profile", config.pprof_file, main_pid,
      [&](std::ostream& out) { report::render_pprof(report, out, pprof_options); },
      Fallback::kTempFile);
  report::SpeedscopeOptions speedscope_options;
  speedscope_options.show_kinds = config.show_leak_kinds;
  speedscope_options.version = MEMTRACK_VERSION;
  written &= write_format(
      "speedscope file", config.speedscope_file, main_pid,
      [&](std::ostream& out) { report::render_speedscope(report, out, speedscope_options); },
      Fallback::kTempFile);
  if (config.html_file.empty()) return written;
  report::HtmlOptions html_options;
  html_options.show_kinds = config.show_leak_kinds;
  html_options.live = live;
  return written & write_format(
                       "HTML report", config.html_file, main_pid,
                       [&](std::ostream& out) {
                         report::render_html(report, out, MEMTRACK_VERSION, html_options);
                       },
                       Fallback::kTempFile);
}

}  // namespace

bool write_outputs(const report::Report& report, const Config& config, uint32_t main_pid,
                   bool text_to_stdout, const std::vector<nlohmann::ordered_json>& live) {
  bool written = true;
  std::optional<report::Report> quiet;
  if (config.quiet) quiet = quiet_report(report, config.show_leak_kinds);
  const report::Report& text_report = quiet ? *quiet : report;
  report::TextOptions text_options;
  // On stdout (snapshot) colour only when asked: its output is usually piped or saved.
  bool on_stdout = config.log_file == "-" || (text_to_stdout && config.log_file.empty());
  text_options.color = on_stdout ? config.color == Config::Color::kAlways : use_color(config);
  text_options.gen_suppressions = config.gen_suppressions;
  text_options.version = MEMTRACK_VERSION;
  text_options.show_kinds = config.show_leak_kinds;
  text_options.max_groups = static_cast<size_t>(config.max_leaks);
  text_options.used_suppressions = config.used_suppressions;
  text_options.valgrind_wording = config.valgrind_wording;
  report::JsonOptions json_options;
  json_options.show_kinds = config.show_leak_kinds;
  if (!config.text_report && config.log_file.empty()) {
    // --format named another format: no text.
  } else if (on_stdout) {
    written &= write_stdout("text report", [&](std::ostream& out) {
      report::render_text(text_report, out, text_options);
    });
  } else if (config.log_file.empty()) {
    report::render_text(text_report, std::cerr, text_options);
  } else {
    errno = 0;
    written &= write_file_or_stderr(
        "log file", expand_pid(config.log_file, main_pid),
        config.expire_ms > 0 ? std::ios::app : std::ios::trunc,
        [&](std::ostream& out) { report::render_text(text_report, out, text_options); });
  }
  if (config.json_file == "-") {
    written &= write_stdout("JSON report", [&](std::ostream& out) {
      report::render_json(report, out, MEMTRACK_VERSION, json_options);
    });
  } else if (!config.json_file.empty()) {
    errno = 0;
    written &=
        write_file_or_stderr("JSON report", expand_pid(config.json_file, main_pid), std::ios::trunc,
                             [&](std::ostream& out) {
                               report::render_json(report, out, MEMTRACK_VERSION, json_options);
                             });
  }
  return written & write_other_formats(report, config, main_pid, live);
}

int exit_status(const report::Report& report, const Config& config, int program_status) {
  if (config.error_exitcode == 0) return program_status;
  for (const report::ProcessReport& p : report.processes) {
    if (!p.errors.empty()) return config.error_exitcode;
    if (config.error_for_fds && !p.resource_sites.empty()) return config.error_exitcode;
    if (config.error_for_no_data && !p.has_leak_data && !p.no_data_expected) {
      return config.error_exitcode;
    }
    if (report::has_leaks_of_kinds(p, config.errors_for_leak_kinds)) return config.error_exitcode;
  }
  return program_status;
}

}  // namespace memtrack::cli
