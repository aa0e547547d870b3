// The option table (option_table.h) translated into a CLI11 parser, and the checks between
// options.
#include "cli/options.h"

#include <fcntl.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <tuple>

#include "cli/lsan_environment.h"
#include "cli/option_table.h"
#include "cli/option_values.h"
#include "cli/valgrind_options.h"
#include "core/flags.h"
#include "report/leak_kinds.h"
#include "report/model.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

namespace memtrack::cli {
namespace {

void add_options(CLI::App& app, Config& config, Command command) {
  for (const OptionSpec& spec : option_table()) {
    if ((spec.commands & command) == 0) continue;
    CLI::Option* option = nullptr;
    if (spec.metavar == nullptr) {
      app.add_flag_function(
          spec.name, [&config, &spec](std::int64_t) { spec.apply(config, ""); }, spec.help);
      continue;
    }
    if (spec.repeatable) {
      option = app.add_option_function<std::vector<std::string>>(
                      spec.name,
                      [&config, &spec](const std::vector<std::string>& values) {
                        for (const std::string& v : values) spec.apply(config, v);
                      },
                      spec.help)
                   ->allow_extra_args(false)  // one value per occurrence: never swallow PROG
                   ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    } else {
      option = app.add_option_function<std::string>(
                      spec.name, [&config, &spec](const std::string& v) { spec.apply(config, v); },
                      spec.help)
                   ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
    option->type_name(spec.metavar);
  }
}

// Splits "memtrack run OPTIONS -- PROG ARGS" at the first "--": CLI11 sees only the part
// before it, and the program's own arguments are never parsed as memtrack options. If PROG
// turns out to come before that "--", the caller puts the "--" back into PROG's arguments.
std::vector<std::string> split_at_double_dash(int argc, char** argv, Config& config,
                                              bool* had_dash) {
  std::vector<std::string> ours;
  *had_dash = false;
  for (int i = 1; i < argc; ++i) {
    if (!*had_dash && std::string(argv[i]) == "--") {
      *had_dash = true;
      continue;
    }
    (*had_dash ? config.program : ours).push_back(argv[i]);
  }
  return ours;
}

// `memtrack run`'s usage line names PROG, which CLI11 cannot know (prefix_command()).
class RunFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string) const override {
    return "Usage: memtrack run [OPTIONS] [--] PROG [ARGS...]\n";
  }
};

// Whether `name` (e.g. "--log-file" or "-d") is one of memtrack's options that take a value.
bool option_takes_value(const std::string& name) {
  for (const OptionSpec& spec : option_table()) {
    if (spec.metavar == nullptr) continue;
    std::string names = std::string(",") + spec.name + ",";
    if (names.find("," + name + ",") != std::string::npos) return true;
  }
  return false;
}

// --leak-check=summary|no, applied after every option whatever their order. As in valgrind,
// leaks are errors (for --error-exitcode) only in a full check.
void apply_leak_check(Config& config) {
  if (config.leak_check == Config::LeakCheck::kFull) return;
  config.show_leak_kinds = report::LeakKinds{};
  config.errors_for_leak_kinds = report::LeakKinds{};
}

// report --format=F: F's file option becomes "-" and the text is left out; --xml=no drops the
// XML output. Applied after every option whatever their order. Throws Error.
void apply_output_format(Config& config) {
  if (config.xml == Config::Xml::kNo) config.xml_file.clear();
  const std::string& format = config.report_format;
  if (format.empty() || format == "text") {
    if (format == "text") config.log_file = "-";
    return;
  }
  std::string* file = format == "json"         ? &config.json_file
                      : format == "junit"      ? &config.junit_file
                      : format == "collapsed"  ? &config.collapsed_file
                      : format == "xml"        ? &config.xml_file
                      : format == "sarif"      ? &config.sarif_file
                      : format == "pprof"      ? &config.pprof_file
                      : format == "speedscope" ? &config.speedscope_file
                      : format == "html"       ? &config.html_file
                                               : nullptr;
  if (file == nullptr) {
    throw Error(
        "--format expects text, json, junit, collapsed, xml, sarif, pprof, speedscope or html, "
        "not '" +
        format + "'");
  }
  *file = "-";
  config.text_report = false;
}

// The file options of the formats other than the text.
std::array<const std::string*, 8> format_files(const Config& config) {
  return {&config.json_file,  &config.junit_file, &config.collapsed_file,  &config.xml_file,
          &config.sarif_file, &config.pprof_file, &config.speedscope_file, &config.html_file};
}

// Checks between options, after all are parsed. Throws Error.
void check_option_combinations(const Config& config) {
  if (config.command == kRun && config.fail_on != Config::FailOn::kNever &&
      config.baseline.empty()) {
    throw Error("--fail-on needs --baseline (memtrack run compares with nothing without it)");
  }
  if (config.command == kRun && config.expire_ms == 0) {
    if (config.report_interval_ms > 0) {
      throw Error("--report-interval needs --expire (live mode is off without it)");
    }
    if (!config.live_json.empty()) {
      throw Error("--live-json needs --expire (live mode is off without it)");
    }
  }
  if (config.command == kRun && !config.pprof_http.empty() && !config.snapshots) {
    throw Error("--pprof-http needs --snapshots=yes (each request takes a snapshot)");
  }
  if (config.log_file == "-" && config.json_file == "-") {
    throw Error("--log-file=- and --json=- cannot both write to stdout");
  }
  if (config.xml == Config::Xml::kYes && config.xml_file.empty()) {
    throw Error("--xml=yes needs --xml-file=FILE or --xml-fd=N (where to write the XML)");
  }
  int on_stdout = config.log_file == "-" ? 1 : 0;
  for (const std::string* file : format_files(config)) on_stdout += *file == "-" ? 1 : 0;
  if (on_stdout > 1) {
    throw Error(
        "only one of --log-file, --json, --junit, --collapsed, --xml-file, --sarif, --pprof, "
        "--speedscope, --html and --format can write to stdout");
  }
}

constexpr const char* kCommandNames[] = {"run", "report",     "top",    "snapshot", "diff",
                                         "ui",  "link-flags", "attach", "detach"};

bool is_command_name(const std::string& word) {
  return std::find(std::begin(kCommandNames), std::end(kCommandNames), word) !=
         std::end(kCommandNames);
}

// "memtrack ./prog": a program where a subcommand belongs. Returns true after the message.
bool reject_program_as_command(int argc, char** argv) {
  if (argc < 2) return false;
  std::string first = argv[1];
  if (first.empty() || first[0] == '-' || is_command_name(first)) return false;
  std::cerr << "memtrack: error: unknown command '" << first
            << "' (to run a program under memtrack: memtrack run [OPTIONS] [--] " << first
            << " [ARGS...])\n";
  return true;
}

}  // namespace

bool writes_a_format_to_stdout(const Config& config) {
  const auto files = format_files(config);
  return std::any_of(files.begin(), files.end(), [](const std::string* f) { return *f == "-"; });
}

bool parse_command_line(int argc, char** argv, Config* config, int* exit_code) {
  CLI::App app{"memtrack: finds memory leaks in native Linux programs without recompiling them",
               "memtrack"};
  app.set_version_flag("--version", "memtrack " MEMTRACK_VERSION);
  app.require_subcommand(1);
  if (reject_program_as_command(argc, argv)) {
    *exit_code = kExitToolFailed;
    return false;
  }
  // The command comes first, and only it is parsed: the others get their name and summary
  // (what `memtrack --help` lists) but not their options, whose parsers cost most of the
  // CLI's own start (CLI11 checks each new option against all before it). Without a command
  // first (--help, --version, a mistake) every command is built, as the message may need it.
  const std::string first = argc > 1 ? argv[1] : "";
  const bool build_all = !is_command_name(first);
  auto wanted = [&](const char* command) { return build_all || first == command; };
  // LSAN_OPTIONS first, so that the command line wins over it.
  if (first == "run") config->lsan_notes = apply_lsan_environment(*config);
  CLI::App* run = app.add_subcommand("run", "Run PROG under memtrack and report its leaks");
  run->prefix_command();  // the first non-option argument starts the program
  run->formatter(std::make_shared<RunFormatter>());
  if (wanted("run")) add_options(*run, *config, kRun);
  run->footer(
      "Exit status: the program's own (128+N if it was killed by signal N), or the\n"
      "--error-exitcode value when leaks, allocator misuse errors or processes without leak\n"
      "data were found (descriptors left open too with --error-for-fds=yes); 125 when\n"
      "memtrack itself fails or PROG cannot be tracked (static, setuid), 126 when PROG cannot\n"
      "be executed, 127 when PROG is not found.");
  CLI::App* report = app.add_subcommand("report", "Render result files kept by run --keep-results");
  if (wanted("report")) {
    add_options(*report, *config, kReport);
    report
        ->add_option("FILE", config->files,
                     "Result files (memtrack.PID.mtr), or directories kept by run --keep-results")
        ->required();
  }
  CLI::App* top = app.add_subcommand(
      "top", "Show the memory of every process and thread: live, or once for scripts");
  if (wanted("top")) add_options(*top, *config, kTop);
  top->footer(
      "Keys: < > sort column, N M G sort by pid, RSS, growth, r reverse, / filter, t threads,\n"
      "T tree, p pause, q quit, ? help. '-': not readable (another user's process).\n"
      "Exit status: 0 (128+N when ended by signal N); 125 when memtrack fails (bad option,\n"
      "unreadable DIR, no terminal for the live view).");

  CLI::App* snapshot = app.add_subcommand(
      "snapshot", "Ask a program running under memtrack run for a full leak report now");
  if (wanted("snapshot")) {
    add_options(*snapshot, *config, kSnapshot);
    snapshot
        ->add_option_function<std::string>(
            "PID",
            [config](const std::string& v) {
              config->snapshot_pid = static_cast<uint32_t>(parse_int("PID", v, 1, 1 << 30));
            },
            "The process (it must run under 'memtrack run', which turns on --snapshots)")
        ->type_name("")
        ->required();
  }
  snapshot->footer(
      "The report (text on stdout, --json as in memtrack run) covers the process as it is: its\n"
      "leaks are classified like at exit; it keeps running. Exit status: 0, the\n"
      "--error-exitcode value when leaks were found, 125 when memtrack fails.");

  CLI::App* attach = app.add_subcommand(
      "attach", "Track a running process's allocations from now on, then report its leaks");
  CLI::App* detach = app.add_subcommand(
      "detach", "End a 'memtrack attach' (its final report comes from memtrack attach)");
  for (auto [command, name, mask] :
       {std::tuple{attach, "attach", kAttach}, std::tuple{detach, "detach", kDetach}}) {
    if (!wanted(name)) continue;
    add_options(*command, *config, mask);
    command
        ->add_option_function<std::string>(
            "PID",
            [config](const std::string& v) {
              config->snapshot_pid = static_cast<uint32_t>(parse_int("PID", v, 1, 1 << 30));
            },
            mask == kAttach ? "The process (a dynamically linked x86-64 glibc program)"
                            : "The process memtrack attach is attached to")
        ->type_name("")
        ->required();
  }
  attach->footer(
      "Loads the runtime into the process (ptrace, no debugger) and tracks its allocations from\n"
      "then on; blocks allocated before are not seen. Ctrl-C, --duration or 'memtrack detach\n"
      "PID' ends it with a leak report, and the process runs on as before (docs/attach.md).\n"
      "Exit status: 0, the --error-exitcode value when leaks were found, 125 when memtrack\n"
      "fails (no such process, cannot attach).");
  detach->footer("Exit status: 0, 125 when the process is not attached or does not answer.");

  CLI::App* diff = app.add_subcommand(
      "diff", "Compare the leak groups of two reports: new, grown, shrunk, gone");
  if (wanted("diff")) {
    add_options(*diff, *config, kDiff);
    diff->add_option("BASE", config->baseline,
                     "The earlier report: a JSON report (run --json), a result file or a "
                     "directory kept by run --keep-results")
        ->type_name("")
        ->required();
    diff->add_option("NEW", config->diff_new, "The later report, in one of the same forms")
        ->type_name("")
        ->required();
  }
  diff->footer(
      "Groups are matched by leak kind and stack: each frame's function and source file name\n"
      "(module name without debug info), not lines or addresses (docs/cli.md). Exit status: 0,\n"
      "1 when --fail-on finds a new (or grown) group, 125 when memtrack fails.");

  CLI::App* ui =
      app.add_subcommand("ui", "Show the process table, snapshots and reports in a web browser");
  if (wanted("ui")) {
    add_options(*ui, *config, kUi);
    ui->add_option("FILE", config->files,
                   "Reports to open: JSON reports (--json), result files or directories kept "
                   "by run --keep-results")
        ->type_name("");
  }
  ui->footer(
      "Prints the URL to open, with its access token; serves until stopped (Ctrl-C).\n"
      "Exit status: 125 when memtrack fails (port in use, unreadable FILE).");

  CLI::App* link_flags = app.add_subcommand(
      "link-flags", "Print the linker flags that link the runtime into a static program");
  link_flags->footer(
      "For programs LD_PRELOAD cannot reach (static, setuid):\n"
      "  gcc -static -o prog prog.o $(memtrack link-flags)\n"
      "The program then runs under 'memtrack run' as usual, or alone (its report on stderr).\n"
      "docs/static-link.md has a worked example. Exit status: 0, 125 when memtrack fails.");

  if (argc < 2) {  // a bare "memtrack": what it can do, as --help says it
    std::cerr << app.help();
    *exit_code = kExitToolFailed;
    return false;
  }
  config->memtrack_argv.assign(argv, argv + argc);
  bool had_dash = false;
  std::vector<std::string> args = split_at_double_dash(argc, argv, *config, &had_dash);
  try {
    if (!args.empty() && args.front() == "run") {
      std::vector<std::string> options(args.begin() + 1, args.end());
      drop_valgrind_ignored_options(options, option_takes_value);
      options.insert(options.begin(), "run");
      args = std::move(options);
    }
    std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
    app.parse(args);
  } catch (const CLI::Success& e) {
    *exit_code = app.exit(e);  // --help, --version
    return false;
  } catch (const CLI::ParseError& e) {
    std::cerr << "memtrack: error: " << e.what() << " (see memtrack --help)\n";
    *exit_code = kExitToolFailed;
    return false;
  } catch (const Error& e) {
    std::cerr << "memtrack: error: " << e.what() << "\n";
    *exit_code = kExitToolFailed;
    return false;
  }
  if (run->parsed()) {
    config->command = kRun;
    std::vector<std::string> rest = run->remaining();
    // prefix_command() stops at the first argument it does not know, options included.
    if (!rest.empty() && rest.front().size() > 1 && rest.front()[0] == '-') {
      std::cerr << "memtrack: error: unknown option '" << rest.front()
                << "' (see memtrack run --help; put '--' before a program whose name starts "
                   "with '-')\n";
      *exit_code = kExitToolFailed;
      return false;
    }
    if (!rest.empty()) {
      // PROG came before the first "--", so that "--" and what follows are PROG's arguments
      // (memtrack run git log -- file).
      if (had_dash) rest.push_back("--");
      rest.insert(rest.end(), config->program.begin(), config->program.end());
      config->program = rest;
    }
    if (config->program.empty()) {
      std::cerr << "memtrack: error: no program given (usage: memtrack run [OPTIONS] [--] PROG "
                   "[ARGS...])\n";
      *exit_code = kExitToolFailed;
      return false;
    }
  } else {
    config->command = report->parsed()       ? kReport
                      : snapshot->parsed()   ? kSnapshot
                      : diff->parsed()       ? kDiff
                      : ui->parsed()         ? kUi
                      : link_flags->parsed() ? kLinkFlags
                      : attach->parsed()     ? kAttach
                      : detach->parsed()     ? kDetach
                                             : kTop;
  }
  try {
    apply_leak_check(*config);
    apply_output_format(*config);
    check_option_combinations(*config);
  } catch (const Error& e) {
    std::cerr << "memtrack: error: " << e.what() << "\n";
    *exit_code = kExitToolFailed;
    return false;
  }
  return true;
}

}  // namespace memtrack::cli
