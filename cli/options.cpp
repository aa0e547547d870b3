// The option table and its translation into a CLI11 parser.
#include "cli/options.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <optional>

#include "report/leak_kinds.h"
#include "report/model.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "0.0.0"
#endif

namespace memtrack::cli {
namespace {

bool parse_yes_no(const std::string& name, const std::string& value) {
  if (value == "yes" || value == "1" || value == "true") return true;
  if (value == "no" || value == "0" || value == "false") return false;
  throw Error(name + " expects yes or no, not '" + value + "'");
}

int parse_int(const std::string& name, const std::string& value, int min, int max) {
  size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || n < min || n > max) {
    throw Error(name + " expects a number from " + std::to_string(min) + " to " +
                std::to_string(max) + ", not '" + value + "'");
  }
  return n;
}

// valgrind's --show-leak-kinds syntax. Unclassified blocks (a runtime without reachability
// scan) are always included: nothing else could show them.
report::LeakKinds parse_leak_kinds(const std::string& name, const std::string& value) {
  std::optional<report::LeakKinds> kinds = report::try_parse_leak_kinds(value);
  if (!kinds) {
    throw Error(name +
                " expects all, none or a comma-separated list of definite, indirect, "
                "possible, reachable, not '" +
                value + "'");
  }
  return kinds->with(report::LeakKind::kUnclassified);
}

struct OptionSpec {
  const char* name;
  const char* metavar;
  const char* help;
  unsigned commands;
  bool repeatable;  // every occurrence applies; otherwise the last one wins
  std::function<void(Config&, const std::string&)> apply;  // called once per occurrence
};

// Option names follow valgrind's where valgrind has one.
const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = {
      {"--log-file", "FILE",
       "Write the text report to FILE instead of stderr (%p: pid of the program). "
       "Default: stderr.",
       kRun | kReport, false, [](Config& c, const std::string& v) { c.log_file = v; }},
      {"--json", "FILE", "Also write the report as JSON to FILE ('-' for stdout). Default: none.",
       kRun | kReport, false, [](Config& c, const std::string& v) { c.json_file = v; }},
      {"--suppressions", "FILE",
       "Suppress leaks matching FILE's 'leak:PATTERN' lines (LeakSanitizer syntax); may be "
       "given several times.",
       kRun | kReport, true, [](Config& c, const std::string& v) { c.suppressions.push_back(v); }},
      {"--gen-suppressions", "yes|no",
       "Print a ready suppression entry under each reported leak. Default: no.", kRun | kReport,
       false,
       [](Config& c, const std::string& v) {
         c.gen_suppressions = parse_yes_no("--gen-suppressions", v);
       }},
      {"--show-leak-kinds", "LIST",
       "Leak kinds listed in the text and JSON reports: all, none or a comma-separated list "
       "of definite, indirect, possible, reachable (blocks the runtime did not classify are "
       "always listed). Default: definite,indirect,possible.",
       kRun | kReport, false,
       [](Config& c, const std::string& v) {
         c.show_leak_kinds = parse_leak_kinds("--show-leak-kinds", v);
       }},
      {"--error-exitcode", "N",
       "Exit with N (1-255) when unsuppressed leaks of the --errors-for-leak-kinds kinds, "
       "allocator misuse errors (double, invalid or mismatched free, realloc of a freed "
       "pointer) or unsuppressed descriptors left open are found. Default: 0 (off: the "
       "program's own exit status).",
       kRun | kReport, false,
       [](Config& c, const std::string& v) {
         c.error_exitcode = parse_int("--error-exitcode", v, 0, 255);
       }},
      {"--errors-for-leak-kinds", "LIST",
       "Leak kinds that make --error-exitcode apply, same syntax as --show-leak-kinds "
       "(blocks the runtime did not classify always count). Default: definite,possible.",
       kRun | kReport, false,
       [](Config& c, const std::string& v) {
         c.errors_for_leak_kinds = parse_leak_kinds("--errors-for-leak-kinds", v);
       }},
      {"--color", "auto|always|never",
       "Colour the text report. Default: auto (only on a terminal, never with NO_COLOR set).",
       kRun | kReport, false,
       [](Config& c, const std::string& v) {
         if (v == "auto") {
           c.color = Config::Color::kAuto;
         } else if (v == "always") {
           c.color = Config::Color::kAlways;
         } else if (v == "never") {
           c.color = Config::Color::kNever;
         } else {
           throw Error("--color expects auto, always or never, not '" + v + "'");
         }
       }},
      {"--num-callers", "N", "Stack frames recorded per allocation (1-256). Default: 32.", kRun,
       false,
       [](Config& c, const std::string& v) {
         c.num_callers = parse_int("--num-callers", v, 1, 256);
       }},
      {"--trace-children", "yes|no",
       "Also track programs the program executes (forked children are always tracked). "
       "Default: yes.",
       kRun, false,
       [](Config& c, const std::string& v) {
         c.trace_children = parse_yes_no("--trace-children", v);
       }},
      {"--halt-on-error", "yes|no",
       "Write the report and abort the program at its first allocator misuse error instead "
       "of letting it go on. Default: no.",
       kRun, false,
       [](Config& c, const std::string& v) {
         c.halt_on_error = parse_yes_no("--halt-on-error", v);
       }},
      {"--track-fds", "yes|no",
       "Report the file descriptors and FILE streams the program opened and left open at exit "
       "(files, sockets, pipes, ...), with the stack that opened them. Default: yes.",
       kRun, false,
       [](Config& c, const std::string& v) { c.track_fds = parse_yes_no("--track-fds", v); }},
      {"--trace-log", "FILE",
       "Write one line per malloc, calloc, realloc, free, new, delete (and aligned forms), "
       "fopen, fdopen, freopen and fclose to FILE: thread id, arguments, result (%p: pid; "
       "FILE is emptied first unless it has %p). Default: none.",
       kRun, false,
       [](Config& c, const std::string& v) {
         if (v.empty()) throw Error("--trace-log expects a file name");
         c.trace_log = v;
       }},
      {"--keep-results", "DIR",
       "Keep the per-process result files in DIR (for 'memtrack report'). Default: a "
       "temporary directory, removed afterwards.",
       kRun, false, [](Config& c, const std::string& v) { c.keep_results = v; }},
  };
  return table;
}

void add_options(CLI::App& app, Config& config, Command command) {
  for (const OptionSpec& spec : option_table()) {
    if ((spec.commands & command) == 0) continue;
    CLI::Option* option = nullptr;
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

}  // namespace

bool parse_command_line(int argc, char** argv, Config* config, int* exit_code) {
  CLI::App app{"memtrack: finds memory leaks in native Linux programs without recompiling them",
               "memtrack"};
  app.set_version_flag("--version", "memtrack " MEMTRACK_VERSION);
  app.require_subcommand(1);
  CLI::App* run = app.add_subcommand("run", "Run PROG under memtrack and report its leaks");
  run->prefix_command();  // the first non-option argument starts the program
  add_options(*run, *config, kRun);
  run->footer(
      "Usage: memtrack run [OPTIONS] [--] PROG [ARGS...]\n"
      "Exit status: the program's own (128+N if it was killed by signal N), or the\n"
      "--error-exitcode value when leaks, allocator misuse errors or descriptors left open\n"
      "were found; 125 when memtrack itself fails, 126 when PROG cannot be executed, 127\n"
      "when PROG is not found.");
  CLI::App* report = app.add_subcommand("report", "Render result files kept by run --keep-results");
  add_options(*report, *config, kReport);
  report->add_option("FILE", config->files, "Result files (memtrack.PID.mtr)")->required();

  bool had_dash = false;
  std::vector<std::string> args = split_at_double_dash(argc, argv, *config, &had_dash);
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
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
    config->command = kReport;
  }
  return true;
}

}  // namespace memtrack::cli
