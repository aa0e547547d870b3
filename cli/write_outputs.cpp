// The report written where the user asked: text (with colour), JSON and the other formats,
// each to its file, stdout or a fallback that says why.
#include "cli/write_outputs.h"

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
#include <optional>

#include "cli/output_paths.h"
#include "report/collapsed_renderer.h"
#include "report/html_renderer.h"
#include "report/json_renderer.h"
#include "report/junit_renderer.h"
#include "report/leak_kinds.h"
#include "report/pprof_renderer.h"
#include "report/sarif_renderer.h"
#include "report/speedscope_renderer.h"
#include "report/text_renderer.h"
#include "report/valgrind_xml_renderer.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

namespace memtrack::cli {

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
           (!p.has_leak_data && !p.no_data_expected) || p.malloc_unseen ||
           report::has_leaks_of_kinds(p, shown);
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

}  // namespace memtrack::cli
