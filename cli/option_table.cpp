// The option table (option_table.h) and the MEMTRACK_OPTIONS string its runtime-flag rows
// make of a Config.
#include "cli/option_table.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "cli/lsan_environment.h"
#include "cli/option_values.h"
#include "cli/pprof_server.h"
#include "cli/valgrind_options.h"
#include "core/flags.h"
#include "report/leak_kinds.h"
#include "report/model.h"

namespace memtrack::cli {
namespace {

// A `memtrack run` option that sets a runtime flag, as declared in core/flags.inc.
struct RuntimeFlagRow {
  const char* name;
  const char* metavar;
  const char* flag;
  // Called once per occurrence with the flag's table entry (for its range).
  std::function<void(Config&, const std::string&, const core::FlagInfo&)> apply;
  std::function<std::string(const Config&)> value;  // see OptionSpec::runtime_value
  const char* note = "";              // what memtrack run adds to the description's first sentence
  const char* cli_default = nullptr;  // memtrack run's default where it is not the flag's
  // The whole help where memtrack run takes the value in other units (a duration, not ms).
  const char* help = nullptr;
  unsigned commands = kRun;  // memtrack attach passes the flags it takes to its runtime too
};

// The flag's default as memtrack run's help states it: "yes"/"no", a number, "none".
std::string default_phrase(const core::FlagInfo& info) {
  std::string text = info.default_text;
  if (info.type == core::FlagType::kBool) return text == "true" ? "yes" : "no";
  if (info.type == core::FlagType::kString && text == "\"\"") return "none";
  return text;
}

// The first sentence of a flag's description: what the option does. Later sentences are
// details for MEMTRACK_OPTIONS users ("Deeper stacks are cut.").
std::string first_sentence(const char* description) {
  std::string text = description;
  size_t end = text.find(". ");
  return end == std::string::npos ? text : text.substr(0, end + 1);
}

// The help is the first sentence of the flag's description, then the row's note, then the
// default.
OptionSpec runtime_flag_option(RuntimeFlagRow row) {
  const core::FlagInfo* info = core::find_flag(row.flag);
  if (info == nullptr) throw Error(std::string("no runtime flag ") + row.flag);
  std::string help = row.help != nullptr
                         ? row.help
                         : first_sentence(info->description) + row.note + " Default: " +
                               (row.cli_default ? row.cli_default : default_phrase(*info)) + ".";
  auto apply = [info, apply = std::move(row.apply)](Config& c, const std::string& v) {
    apply(c, v, *info);
  };
  return {row.name, row.metavar,      help,     row.commands,
          false,    std::move(apply), row.flag, std::move(row.value)};
}

// MEMTRACK_OPTIONS values are quoted so paths may contain ':' or spaces.
std::string quoted(const std::string& value) {
  if (value.find('"') != std::string::npos) {
    throw Error("paths containing '\"' are not supported: " + value);
  }
  return "\"" + value + "\"";
}

int default_max_frames() {
  core::Flags defaults;
  core::set_defaults(&defaults);
  return defaults.max_frames;
}

}  // namespace

// Option names follow valgrind's where valgrind has one.
const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = {
      {"--log-file", "FILE",
       "Write the text report to FILE instead of stderr (%p: pid of the program). "
       "'-': stdout. Default: stderr (snapshot and attach: stdout).",
       kRun | kReport | kSnapshot | kAttach, false, [](Config& c, const std::string& v) { c.log_file = v; }},
      {"--json", "FILE", "Also write the report as JSON to FILE ('-' for stdout). Default: none.",
       kRun | kReport | kSnapshot | kAttach, false, [](Config& c, const std::string& v) { c.json_file = v; }},
      {"--suppressions", "FILE",
       "Suppress the leaks and descriptors that FILE's entries match: LeakSanitizer "
       "'leak:PATTERN' lines or valgrind-style '{ ... }' blocks; may be given several times.",
       kRun | kReport | kSnapshot | kAttach, true,
       [](Config& c, const std::string& v) { c.suppressions.push_back(v); }},
      {"--gen-suppressions", "no|yes|lsan",
       "Print a suppression entry under each reported leak and descriptor site: yes, a "
       "valgrind-style block that matches it and nothing else; lsan, a 'leak:PATTERN' line "
       "that matches no other, when one exists. Default: no.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) {
         // "all": valgrind's spelling of "print every entry without asking".
         if (v == "no" || v == "0" || v == "false") {
           c.gen_suppressions = report::GenSuppressions::kNo;
         } else if (v == "yes" || v == "1" || v == "true" || v == "all") {
           c.gen_suppressions = report::GenSuppressions::kBlock;
         } else if (v == "lsan") {
           c.gen_suppressions = report::GenSuppressions::kLsan;
         } else {
           throw Error("--gen-suppressions expects no, yes or lsan, not '" + v + "'");
         }
       }},
      {"--show-leak-kinds", "LIST",
       "Leak kinds listed in the text and JSON reports: all, none or a comma-separated list "
       "of definite, indirect, possible, reachable (blocks the runtime did not classify are "
       "always listed). Default: definite,indirect,possible.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) {
         c.show_leak_kinds = parse_leak_kinds("--show-leak-kinds", v);
       }},
      {"--error-exitcode", "N",
       "Exit with N (1-255; 0 turns it off) when unsuppressed leaks of the "
       "--errors-for-leak-kinds kinds, allocator misuse errors (double, invalid or mismatched "
       "free, realloc of a freed pointer), processes without leak data (see "
       "--error-for-no-data) or, with --error-for-fds=yes, unsuppressed descriptors left open "
       "are found. Default: 0 (off: the program's own exit status).",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) {
         c.error_exitcode = parse_int("--error-exitcode", v, 0, 255);
       }},
      {"--error-for-fds", "yes|no",
       "Let descriptors left open at exit make --error-exitcode apply (they are reported "
       "either way). Default: no.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) {
         c.error_for_fds = parse_yes_no("--error-for-fds", v);
       }},
      {"--error-for-no-data", "yes|no",
       "Treat a process that left no leak data (killed, static or setuid, report_at_exit=0, "
       "...) as an error for --error-exitcode, and refuse to run a program memtrack cannot "
       "track (no: run it with a warning). Default: yes.",
       kRun | kReport, false,
       [](Config& c, const std::string& v) {
         c.error_for_no_data = parse_yes_no("--error-for-no-data", v);
       }},
      {"--errors-for-leak-kinds", "LIST",
       "Leak kinds that make --error-exitcode apply, same syntax as --show-leak-kinds "
       "(blocks the runtime did not classify always count). Default: definite,possible.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) {
         c.errors_for_leak_kinds = parse_leak_kinds("--errors-for-leak-kinds", v);
       }},
      {"--leak-check", "no|summary|full|yes",
       "valgrind's: full or yes, the leak groups and the LEAK SUMMARY; summary or no, the LEAK "
       "SUMMARY only, and leaks do not make --error-exitcode apply (allocator misuse errors "
       "still do). Overrides --show-leak-kinds and --errors-for-leak-kinds. Default: full.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) {
         if (v == "full" || v == "yes") {
           c.leak_check = Config::LeakCheck::kFull;
         } else if (v == "summary") {
           c.leak_check = Config::LeakCheck::kSummary;
         } else if (v == "no") {
           c.leak_check = Config::LeakCheck::kNo;
         } else {
           throw Error("--leak-check expects no, summary, full or yes, not '" + v + "'");
         }
       }},
      {"--show-reachable", "yes|no",
       "valgrind's: yes is --show-leak-kinds=all, no --show-leak-kinds's default.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) {
         c.show_leak_kinds = parse_yes_no("--show-reachable", v) ? report::LeakKinds::all()
                                                                 : report::kDefaultShownKinds;
       }},
      {"--log-fd", "N",
       "Write the text report to memtrack's descriptor N (1: stdout, 2: stderr), which must be "
       "open. Default: 2 (snapshot and attach: 1).",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) { c.log_file = log_file_for_fd(v); }},
      {"-q,--quiet", nullptr,
       "Leave processes with nothing to report (no leaks listed, no errors, no descriptors "
       "left open, no crash) out of the text report.",
       kRun | kReport | kSnapshot | kAttach, false, [](Config& c, const std::string&) { c.quiet = true; }},
      {"-v,--verbose", nullptr,
       "After each process's report, list the suppression entries that matched, with how "
       "many groups and bytes each took (valgrind's used_suppression lines).",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string&) { c.used_suppressions = true; }},
      {"--xml", "yes|no",
       "valgrind's: yes needs --xml-file or --xml-fd (where the XML goes); no turns them off. "
       "Default: XML only when --xml-file or --xml-fd is given.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) {
         c.xml = parse_yes_no("--xml", v) ? Config::Xml::kYes : Config::Xml::kNo;
       }},
      {"--xml-file", "FILE",
       "Also write the report as valgrind memcheck's XML to FILE ('-' for stdout; %p: one "
       "file per process, as valgrind writes them, else one document with the errors of "
       "every process). Default: none.",
       kRun | kReport | kSnapshot | kAttach, false, [](Config& c, const std::string& v) { c.xml_file = v; }},
      {"--xml-fd", "N",
       "Write the valgrind XML to memtrack's descriptor N (1: stdout), which must be open.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) { c.xml_file = output_file_for_fd("--xml-fd", v); }},
      {"--color", "auto|always|never",
       "Colour the text report. Default: auto (only on a terminal, never with NO_COLOR set).",
       kRun | kReport | kSnapshot | kAttach, false,
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
      // The rows for runtime flags come in the order their MEMTRACK_OPTIONS entries are
      // written (runtime_flag_options). The runtime records at least its default depth
      // whatever --num-callers says, so its
      // rule for blocks the C/C++ runtime keeps sees whole stacks; the report cuts them.
      runtime_flag_option({.name = "--num-callers",
                           .metavar = "N",
                           .flag = "max_frames",
                           .apply =
                               [](Config& c, const std::string& v, const core::FlagInfo& f) {
                                 c.num_callers = parse_int("--num-callers", v, f.min, f.max);
                               },
                           .value =
                               [](const Config& c) {
                                 if (c.num_callers == 0) return std::string();
                                 return std::to_string(
                                     std::max(c.num_callers, default_max_frames()));
                               },
                           .commands = kRun | kAttach}),
      runtime_flag_option({.name = "--trace-children",
                           .metavar = "yes|no",
                           .flag = "follow_exec",
                           .apply =
                               [](Config& c, const std::string& v, const core::FlagInfo&) {
                                 c.trace_children = parse_yes_no("--trace-children", v);
                               },
                           .value = [](const Config& c) {
                             return std::string(c.trace_children ? "" : "0");
                           }}),
      runtime_flag_option({.name = "--child-silent-after-fork",
                           .metavar = "yes|no",
                           .flag = "silent_after_fork",
                           .apply =
                               [](Config& c, const std::string& v, const core::FlagInfo&) {
                                 c.child_silent_after_fork =
                                     parse_yes_no("--child-silent-after-fork", v);
                               },
                           .value = [](const Config& c) {
                             return std::string(c.child_silent_after_fork ? "1" : "");
                           }}),
      runtime_flag_option({.name = "--snapshots",
                           .metavar = "yes|no",
                           .flag = "snapshot_signal",
                           .apply =
                               [](Config& c, const std::string& v, const core::FlagInfo&) {
                                 c.snapshots = parse_yes_no("--snapshots", v);
                               },
                           .value = [](const Config& c) { return std::string(c.snapshots ? "1" : ""); },
                           .cli_default = "yes"}),
      runtime_flag_option({.name = "--halt-on-error",
                           .metavar = "yes|no",
                           .flag = "halt_on_error",
                           .apply =
                               [](Config& c, const std::string& v, const core::FlagInfo&) {
                                 c.halt_on_error = parse_yes_no("--halt-on-error", v);
                               },
                           .value = [](const Config& c) {
                             return std::string(c.halt_on_error ? "1" : "");
                           }}),
      runtime_flag_option({.name = "--show-retainers",
                           .metavar = nullptr,
                           .flag = "retainers",
                           .apply = [](Config& c, const std::string&,
                                       const core::FlagInfo&) { c.show_retainers = true; },
                           .value = [](const Config& c) {
                             return std::string(c.show_retainers ? "1" : "");
                           },
                           .note = " Listed in the text report under RETAINED MEMORY.",
                           .help = "After each leak scan, find what keeps the still-reachable "
                                   "blocks alive: the roots (variables, thread stacks) by the "
                                   "bytes they alone keep, and the top still-reachable sites "
                                   "with the chain of blocks from a root down to them, in the "
                                   "text report's RETAINED MEMORY section and the JSON "
                                   "report. Costs each scan a few passes over the reachable "
                                   "blocks.",
                           .commands = kRun | kAttach}),
      runtime_flag_option({.name = "--track-fds",
                           .metavar = "yes|no",
                           .flag = "track_fds",
                           .apply =
                               [](Config& c, const std::string& v, const core::FlagInfo&) {
                                 c.track_fds = parse_yes_no("--track-fds", v);
                               },
                           .value = [](const Config& c) {
                             return std::string(c.track_fds ? "" : "0");
                           }}),
      runtime_flag_option({.name = "--trace-log",
                           .metavar = "FILE",
                           .flag = "trace_log",
                           .apply =
                               [](Config& c, const std::string& v, const core::FlagInfo&) {
                                 if (v.empty()) throw Error("--trace-log expects a file name");
                                 c.trace_log = v;
                               },
                           .value =
                               [](const Config& c) {
                                 return c.trace_log.empty() ? std::string() : quoted(c.trace_log);
                               },
                           .note = " memtrack run empties the file first unless its name has %p."}),
      runtime_flag_option(
          {.name = "--sample",
           .metavar = "SIZE",
           .flag = "sample_bytes",
           .apply =
               [](Config& c, const std::string& v, const core::FlagInfo& f) {
                 c.sample_bytes = static_cast<int>(
                     parse_size("--sample", v, static_cast<uint64_t>(f.max)));
               },
           .value =
               [](const Config& c) {
                 return c.sample_bytes > 0 ? std::to_string(c.sample_bytes) : std::string();
               },
           .help = "The sampled mode, for production: capture a stack for about one allocation "
                   "per SIZE bytes allocated (512KiB is a good start; docs/sampling.md), at a "
                   "fraction of the full mode's cost. Every block is still tracked: leak totals are "
                   "exact, the sites they come from are estimates (~). 0: every allocation's "
                   "stack (the default).",
           .commands = kRun | kAttach}),
      runtime_flag_option({.name = "--sample-seed",
                           .metavar = "N",
                           .flag = "sample_seed",
                           .apply =
                               [](Config& c, const std::string& v, const core::FlagInfo& f) {
                                 c.sample_seed = parse_int("--sample-seed", v, f.min, f.max);
                               },
                           .value =
                               [](const Config& c) {
                                 return c.sample_seed > 0 ? std::to_string(c.sample_seed)
                                                          : std::string();
                               },
                           .help = "The sampled mode: the sampler's seed, so that a run can be "
                                   "repeated exactly. Default: a new seed each run.",
           .commands = kRun | kAttach}),
      runtime_flag_option(
          {.name = "--check-heap",
           .metavar = "MODE",
           .flag = "check_heap",
           .apply = [](Config& c, const std::string& v,
                       const core::FlagInfo&) { c.check_heap = parse_check_heap(v); },
           // Quoted: "sample:N" holds the options' separator.
           .value = [](const Config& c) {
             return c.check_heap.empty() ? std::string() : quoted(c.check_heap);
           },
           .help = "Find heap memory errors. `full` (for tests): every block "
                   "gets redzones, checked when it is freed and at exit, and freed blocks wait "
                   "in a quarantine, checked when they leave it, so a write just outside a "
                   "block or to a freed one is reported with the allocation and free stacks "
                   "(not reads, and not at the instruction). `sample[:N]` (for production) "
                   "places about one allocation in N (default 1000) of up to a page between "
                   "inaccessible guard pages, so an overflow, underflow or use after free of it "
                   "is caught at the instruction and reported with the access, allocation and "
                   "free stacks; `sample:1` checks every such block. `off`: none (the default). "
                   "docs/heap-errors.md.",
           .commands = kRun}),
      runtime_flag_option(
          {.name = "--expire",
           .metavar = "DURATION",
           .flag = "expire_ms",
           .apply =
               [](Config& c, const std::string& v, const core::FlagInfo&) {
                 c.expire_ms = parse_duration_ms("--expire", v);
               },
           .value =
               [](const Config& c) {
                 return c.expire_ms > 0 ? std::to_string(c.expire_ms) : std::string();
               },
           .help = "Live mode: while the program runs, report every allocation site that holds "
                   "blocks older than DURATION (500ms, 30s, 5m, 1h), with its growth since the "
                   "previous report. Default: off.",
           .commands = kRun | kAttach}),
      runtime_flag_option(
          {.name = "--report-interval",
           .metavar = "DURATION",
           .flag = "report_interval_ms",
           .apply =
               [](Config& c, const std::string& v, const core::FlagInfo&) {
                 c.report_interval_ms = parse_duration_ms("--report-interval", v);
               },
           .value =
               [](const Config& c) {
                 if (c.expire_ms == 0 || c.report_interval_ms == 0) return std::string();
                 return std::to_string(c.report_interval_ms);
               },
           .help = "Live mode: time between live reports. Default: the --expire value.",
           .commands = kRun | kAttach}),
      {"--pprof-http", "[HOST:]PORT",
       "While the program runs, serve its heap over HTTP as Go programs do: "
       "/debug/pprof/heap (a pprof profile of the blocks it holds and of what it allocated "
       "since the start, by allocation stack, for go tool pprof, Parca, Pyroscope) and /metrics (Prometheus). Each request takes a snapshot "
       "(one leak scan). HOST defaults to 127.0.0.1; anyone who can reach the port can read "
       "the program's stacks (docs/sampling.md). Default: off.",
       kRun | kAttach, false,
       [](Config& c, const std::string& v) {
         parse_listen_address(v);  // checked now, before anything runs
         c.pprof_http = v;
       },
       // The runtime then counts what each stack allocates (alloc_objects, alloc_space).
       "alloc_totals",
       [](const Config& c) { return std::string(c.pprof_http.empty() ? "" : "1"); }},
      {"--live-json", "FILE",
       "Live mode: also write each live report to FILE as one JSON object per line.",
       kRun | kAttach, false,
       [](Config& c, const std::string& v) { c.live_json = v; }},
      {"--wait-children", "DURATION",
       "When the program has ended, wait up to DURATION (0 for no wait) for the processes "
       "it started that still run (daemons included); those still running then are listed "
       "and the result directory is kept for them. Default: 1s.",
       kRun, false,
       [](Config& c, const std::string& v) {
         c.wait_children_ms = v == "0" ? 0 : parse_duration_ms("--wait-children", v);
       }},
      {"--timeout", "SECONDS", "How long to wait for the program's report. Default: 30.",
       kSnapshot | kUi | kAttach | kDetach,
       false,
       [](Config& c, const std::string& v) {
         c.snapshot_timeout_s = parse_seconds("--timeout", v);
       }},
      {"--retainers", "ADDR",
       "Also say what keeps the block holding address ADDR (hex, 0x...) alive: its verdict, "
       "the chain of blocks from the root that holds it, and every root and block that "
       "points at it (valgrind's who_points_at).",
       kSnapshot, false,
       [](Config& c, const std::string& v) {
         size_t used = 0;
         uint64_t address = 0;
         try {
           address = std::stoull(v, &used, 0);
         } catch (const std::exception&) {
           used = 0;
         }
         if (used == 0 || used != v.size() || address == 0) {
           throw Error("--retainers expects a nonzero address such as 0x55d0c2a4b2c0, not '" +
                       v + "'");
         }
         c.snapshot_block = address;
       }},
      {"--duration", "SECONDS",
       "Detach after this long and report (memtrack attach). Default: stay attached until "
       "Ctrl-C, 'memtrack detach PID' or the end of the process.",
       kAttach, false,
       [](Config& c, const std::string& v) {
         c.attach_duration_s = parse_seconds("--duration", v);
       }},
      {"--keep-results", "DIR",
       "Keep the per-process result files in DIR (for 'memtrack report'). Default: a "
       "temporary directory, removed afterwards.",
       kRun, false, [](Config& c, const std::string& v) { c.keep_results = v; }},
      // Other output formats, memtrack diff and memtrack run --baseline
      {"--junit", "FILE",
       "Also write the report as JUnit XML to FILE ('-' for stdout): one test case per "
       "process, failing when it has leaks of the --errors-for-leak-kinds kinds, allocator "
       "misuse errors or a crash. Default: none.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) { c.junit_file = v; }},
      {"--collapsed", "FILE",
       "Also write the leaked bytes as collapsed stacks to FILE ('-' for stdout), one "
       "'prog;main;...;leaf BYTES' line per stack, for flamegraph.pl. Default: none.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) { c.collapsed_file = v; }},
      {"--sarif", "FILE",
       "Also write the report as SARIF 2.1.0 to FILE ('-' for stdout), for code scanning: "
       "one result per leak group, allocator misuse error and descriptor left open, files "
       "under --source-root relative to it (SRCROOT). Default: none.",
       kRun | kReport | kSnapshot | kAttach, false, [](Config& c, const std::string& v) { c.sarif_file = v; }},
      {"--source-root", "DIR",
       "The checkout's root for --sarif: source files under DIR are given relative to it "
       "(uriBaseId SRCROOT), as code scanning resolves them; set it when memtrack runs in a "
       "build directory. Default: the working directory.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) { c.source_root = v; }},
      {"--pprof", "FILE",
       "Also write the leaked bytes and blocks by stack as a gzipped pprof profile to FILE "
       "('-' for stdout, not a terminal), for go tool pprof, Pyroscope and Parca. "
       "Default: none.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) { c.pprof_file = v; }},
      {"--speedscope", "FILE",
       "Also write the leaked bytes by stack as a speedscope file to FILE ('-' for stdout), "
       "one flame graph per process and leak kind. Default: none.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) { c.speedscope_file = v; }},
      {"--html", "FILE",
       "Also write the report as one self-contained HTML page to FILE ('-' for stdout): "
       "leak table, stacks with source lines, flame graph, errors, descriptors and, after "
       "--expire, a chart per site; for a heap profile: heap over time, peak, top sites, window "
       "and flame graphs. Default: none.",
       kRun | kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) { c.html_file = v; }},
      {"--format", "FORMAT",
       "Print the report on stdout in FORMAT instead of the text on stderr: text, json, junit, "
       "collapsed, xml (valgrind's), sarif, pprof, speedscope or html. Default: text.",
       kReport | kSnapshot | kAttach, false,
       [](Config& c, const std::string& v) { c.report_format = v; }},
      // Heap profiles (docs/profiling.md)
      {"--profile", "FILE",
       "Also record a heap profile of every allocation and free (size, stack, time, thread) "
       "and the RSS over time into FILE, one per process (%p: the pid; without it, the "
       "other processes get FILE.PID), for 'memtrack report FILE'. Default: none.",
       kRun | kAttach, false,
       [](Config& c, const std::string& v) {
         if (v.empty()) throw Error("--profile expects a file name");
         c.profile_file = v;
       }},
      {"--massif", "FILE",
       "For a heap profile: also write it in valgrind massif's format to FILE ('-' for "
       "stdout), for ms_print and massif-visualizer. Default: none.",
       kReport, false, [](Config& c, const std::string& v) { c.massif_file = v; }},
      {"--collapsed-kind", "allocated|allocations|temporary|peak|leaked|window",
       "For a heap profile: what --collapsed adds up per stack: bytes allocated, number of "
       "allocations, of temporary allocations, bytes live at the peak, not freed at the end, "
       "or allocated in the --from/--to window and not freed in it. Default: allocated.",
       kReport, false,
       [](Config& c, const std::string& v) {
         for (const char* kind : {"allocated", "allocations", "temporary", "peak", "leaked",
                                  "window"}) {
           if (v == kind) {
             c.collapsed_kind = v;
             return;
           }
         }
         throw Error("--collapsed-kind expects allocated, allocations, temporary, peak, leaked "
                     "or window, not '" + v + "'");
       }},
      {"--from", "TIME",
       "For a heap profile: start of the time window (since the process started: 0, 500ms, "
       "2s, 1m) whose allocations not freed in it are listed. Default: the start.",
       kReport, false,
       [](Config& c, const std::string& v) {
         c.from_ms = v == "0" ? 0 : parse_duration_ms("--from", v);
       }},
      {"--to", "TIME", "For a heap profile: end of the time window. Default: the end.", kReport,
       false,
       [](Config& c, const std::string& v) { c.to_ms = v == "0" ? 0 : parse_duration_ms("--to", v); }},
      {"--sites", "N", "For a heap profile: sites listed per ranking. Default: 10.", kReport, false,
       [](Config& c, const std::string& v) { c.profile_sites = parse_int("--sites", v, 1, 100000); }},
      {"--sysroot", "DIR",
       "Look for the program's libraries and executables under DIR first (DIR/lib/libc.so.6 "
       "for /lib/libc.so.6): for result files of a program that ran on another machine or "
       "under an emulator (qemu-aarch64 -L DIR). Default: none.",
       kReport, false, [](Config& c, const std::string& v) { c.sysroot = v; }},
      {"--baseline", "FILE",
       "After the run, compare its leak groups with FILE, a JSON report of an earlier run "
       "(--json), and print the differences as memtrack diff does. Default: none.",
       kRun, false, [](Config& c, const std::string& v) { c.baseline = v; }},
      {"--fail-on", "never|new|grown",
       "Fail when a leak group is new (not in the baseline) or, with grown, also when one "
       "has more bytes or blocks. Exit status then: 1 (run: the --error-exitcode value, if set). Default: never.",
       kRun | kDiff, false,
       [](Config& c, const std::string& v) {
         if (v == "never") {
           c.fail_on = Config::FailOn::kNever;
         } else if (v == "new") {
           c.fail_on = Config::FailOn::kNew;
         } else if (v == "grown") {
           c.fail_on = Config::FailOn::kGrown;
         } else {
           throw Error("--fail-on expects never, new or grown, not '" + v + "'");
         }
       }},
      {"--json", "FILE",
       "Also write the differences as JSON to FILE ('-': stdout, instead of the text). "
       "Default: none.",
       kDiff, false, [](Config& c, const std::string& v) { c.json_file = v; }},
      // memtrack top
      {"-d,--delay", "SECONDS", "Refresh every SECONDS (fractions allowed). Default: 1.", kTop,
       false,
       [](Config& c, const std::string& v) { c.top.delay_seconds = parse_seconds("-d", v); }},
      {"--once", nullptr,
       "Print the table once to stdout and exit, without escape codes; commands are cut to "
       "the terminal's width (or $COLUMNS), and not at all when stdout is not a terminal.",
       kTop, false, [](Config& c, const std::string&) { c.top.once = true; }},
      {"--json", nullptr,
       "Print the processes, each with its threads, once to stdout as JSON and exit.", kTop, false,
       [](Config& c, const std::string&) { c.top.json = true; }},
      {"--samples", "N",
       "With --once or --json: take N samples SECONDS apart and print the last, so growth "
       "covers (N-1) x SECONDS. Default: 1.",
       kTop, false,
       [](Config& c, const std::string& v) { c.top.samples = parse_int("--samples", v, 1, 1000); }},
      {"--pid", "PID",
       "Show only process PID; may be given several times or as a comma-separated list.", kTop,
       true, [](Config& c, const std::string& v) { parse_pids(v, &c.top.view.pids); }},
      {"--user", "USER",
       "Show only the processes of USER (a name or a uid); may be given several times.", kTop, true,
       [](Config& c, const std::string& v) { c.top.view.users.push_back(v); }},
      {"--filter", "TEXT",
       "Show only processes whose command, name or user contains TEXT (ignoring case) or "
       "whose pid is TEXT, as the '/' key does. Default: none.",
       kTop, false, [](Config& c, const std::string& v) { c.top.view.filter = v; }},
      {"--sort", "COLUMN",
       "Sort by COLUMN: " + top::sort_column_list() +
           "; numbers largest first, text A to Z. Default: rss.",
       kTop, false,
       [](Config& c, const std::string& v) {
         std::optional<top::SortColumn> column = top::try_parse_sort_column(v);
         if (!column) {
           throw Error("--sort expects one of " + top::sort_column_list() + ", not '" + v + "'");
         }
         c.top.view.sort = *column;
       }},
      {"--reverse", nullptr, "Reverse the sort order.", kTop, false,
       [](Config& c, const std::string&) { c.top.view.reverse = true; }},
      {"--limit", "N", "Show at most N processes (the first after sorting). Default: all.", kTop,
       false,
       [](Config& c, const std::string& v) {
         c.top.view.limit = static_cast<size_t>(parse_int("--limit", v, 1, 1 << 30));
       }},
      {"--threads", nullptr,
       "Show each process's threads under it (TID, TGID, state, CPU time, name), as 't' does.",
       kTop, false, [](Config& c, const std::string&) { c.top.view.threads = true; }},
      {"--tree", nullptr, "Show processes under their parent, as 'T' does.", kTop, false,
       [](Config& c, const std::string&) { c.top.view.tree = true; }},
      {"--growth-samples", "N",
       "Mark a process as growing (^ in column G) when its RSS grew in each of its last N "
       "samples (1-1000). Default: 5.",
       kTop, false,
       [](Config& c, const std::string& v) {
         c.top.growth_samples = parse_int("--growth-samples", v, 1, 1000);
       }},
      {"--proc-root", "DIR", "Read the processes from DIR instead of /proc. Default: /proc.",
       kTop | kUi, false, [](Config& c, const std::string& v) { c.top.proc_root = v; }},
      // memtrack ui
      {"--port", "PORT", "Listen on PORT. Default: a free port.", kUi, false,
       [](Config& c, const std::string& v) { c.ui.port = parse_int("--port", v, 1, 65535); }},
      {"--listen", "ADDR",
       "Listen on ADDR instead of 127.0.0.1 and ::1 (with a loud warning: anyone who reaches "
       "ADDR and has the token sees every process). Default: loopback only.",
       kUi, false, [](Config& c, const std::string& v) { c.ui.listen = v; }},
      {"--open", nullptr, "Open the URL in the desktop's browser (xdg-open).", kUi, false,
       [](Config& c, const std::string&) { c.ui.open = true; }},
  };
  return table;
}

std::string runtime_flag_options(const Config& config) {
  std::string options;
  for (const OptionSpec& spec : option_table()) {
    if (spec.flag == nullptr) continue;
    std::string value = spec.runtime_value(config);
    if (value.empty()) continue;
    if (!options.empty()) options += ':';
    options += std::string(spec.flag) + "=" + value;
  }
  return options;
}

std::string quoted_option_value(const std::string& value) {
  return quoted(value);
}

}  // namespace memtrack::cli
