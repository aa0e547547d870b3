// The memtrack command's options: one table (name, metavar, help with the default, which
// subcommands take it, handler), from which the CLI11 parser and --help are generated.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "proc/view.h"
#include "report/gen_suppressions.h"
#include "report/model.h"

namespace memtrack::cli {

enum Command : unsigned {
  kRun = 1,
  kReport = 2,
  kTop = 4,
  kSnapshot = 8,
  kDiff = 16,
  kUi = 32,
  kLinkFlags = 64,
  kAttach = 128,
  kDetach = 256
};

// memtrack top's options (docs/cli.md).
struct TopConfig {
  double delay_seconds = 1.0;
  bool once = false;       // print the table once
  bool json = false;       // print JSON once
  int samples = 1;         // --once/--json: samples taken, delay_seconds apart
  int growth_samples = 5;  // "growing" after this many increases in a row
  std::string proc_root = "/proc";
  top::ViewOptions view;  // sort, filters, limit, threads, tree
};

// memtrack ui's options (docs/cli.md, docs/ui.md).
struct UiConfig {
  int port = 0;        // 0: a free port
  std::string listen;  // "": 127.0.0.1 and ::1
  bool open = false;   // open the URL with xdg-open
};

struct Config {
  Command command = kRun;
  std::string log_file;        // text report destination; "" = stderr
  std::string json_file;       // "" = none, "-" = stdout
  std::string junit_file;      // JUnit XML; "" = none, "-" = stdout
  std::string collapsed_file;  // collapsed stacks; "" = none, "-" = stdout
  std::string xml_file;        // valgrind XML; "" = none, "-" = stdout
  enum class Xml { kUnset, kYes, kNo } xml = Xml::kUnset;  // valgrind's --xml
  std::string pprof_file;                  // gzipped profile.proto; "" = none, "-" = stdout
  std::string speedscope_file;             // speedscope JSON; "" = none, "-" = stdout
  std::string html_file;                   // the HTML report; "" = none, "-" = stdout
  std::string sarif_file;                  // SARIF; "" = none, "-" = stdout
  std::string source_root;                 // SARIF's SRCROOT; "" = the working directory
  std::string report_format;               // report --format; "" = text
  bool text_report = true;                 // false: --format put another format in the text's place
  std::vector<std::string> memtrack_argv;  // memtrack's own command line (valgrind XML)
  std::vector<std::string> suppressions;   // files
  std::string sysroot;  // report: where the modules of a program of another machine are
  report::GenSuppressions gen_suppressions = report::GenSuppressions::kNo;
  int error_exitcode = 0;         // 0 = off; applies to leaks and to allocator misuse errors
  bool error_for_fds = false;     // descriptors open at exit make error_exitcode apply
  bool error_for_no_data = true;  // a process without leak data makes error_exitcode apply,
                                  // and run refuses a program it cannot track
  // Listed in the reports (--show-leak-kinds); unclassified is always in.
  report::LeakKinds show_leak_kinds = report::kDefaultShownKinds;
  // Make error_exitcode apply (--errors-for-leak-kinds); unclassified is always in.
  report::LeakKinds errors_for_leak_kinds = {
      report::LeakKind::kDefinite, report::LeakKind::kPossible, report::LeakKind::kUnclassified};
  enum class Color { kAuto, kAlways, kNever } color = Color::kAuto;
  int num_callers = 0;  // 0: the runtime's default (32) or MEMTRACK_OPTIONS's max_frames
  bool trace_children = true;
  bool child_silent_after_fork = false;
  bool show_retainers = false;       // the runtime finds what holds still-reachable blocks
  bool halt_on_error = false;        // the runtime ends the program at its first misuse error
  bool track_fds = true;             // report descriptors left open (runtime track_fds)
  std::string trace_log;             // event log file (runtime trace_log); "" = none
  std::string keep_results;          // directory; "" = temporary
  std::vector<std::string> program;  // run: PROG ARGS...
  std::vector<std::string> files;    // report: FILE...
  TopConfig top;                     // top
  UiConfig ui;                       // ui (and files: the reports to open)
  // valgrind's --leak-check: kSummary and kNo list no groups and keep leaks out of the exit
  // status (they override --show-leak-kinds and --errors-for-leak-kinds).
  enum class LeakCheck { kNo, kSummary, kFull } leak_check = LeakCheck::kFull;
  bool quiet = false;  // -q: the text report leaves out processes with nothing to report
  // Run as memtrack-valgrind: valgrind's command line (no `run`), and the text report in
  // memcheck's wording, which CTest's `ctest -T memcheck` parses (report::TextOptions).
  bool valgrind_wording = false;
  // -v (LSAN_OPTIONS print_suppressions=1): list the suppression entries that matched.
  bool used_suppressions = false;
  int max_leaks = 0;  // LSAN_OPTIONS max_leaks: groups listed per process (0: all)
  // run: what memtrack says about LSAN_OPTIONS and ASAN_OPTIONS before the program starts.
  std::vector<std::string> lsan_notes;
  // The sampled mode (run; docs/sampling.md): the mean interval in bytes (0: the full mode)
  // and the sampler's seed (0: a new one each run).
  int sample_bytes = 0;
  int sample_seed = 0;
  std::string check_heap;  // --check-heap, as the runtime's check_heap option ("": off)
  std::string pprof_http;  // --pprof-http's [HOST:]PORT; "" = off
  // Live mode (run): reports of allocation sites holding blocks older than expire_ms.
  int expire_ms = 0;           // 0: off
  int report_interval_ms = 0;  // 0: expire_ms
  std::string live_json;       // JSON Lines file; "" = none
  bool snapshots = true;       // the program answers `memtrack snapshot PID`
  // run: how long to wait for descendants still running when the program has ended.
  int wait_children_ms = 1000;
  // snapshot: the target and how long to wait for its report.
  uint32_t snapshot_pid = 0;
  double snapshot_timeout_s = 30;
  uint64_t snapshot_block = 0;   // memtrack snapshot --retainers: the address asked about
  double attach_duration_s = 0;  // memtrack attach --duration: 0 = until Ctrl-C or detach
  // diff BASE NEW and run --baseline=BASE: the earlier report, the later one (diff) and
  // what fails the gate.
  std::string baseline;  // "" = none
  std::string diff_new;
  // Heap profiles (docs/profiling.md): run --profile records one; report analyses it.
  std::string profile_file;                  // run: "" = none; %p: the pid
  std::string massif_file;                   // report: massif.out of the profile; "" = none
  std::string collapsed_kind = "allocated";  // report: what --collapsed adds up for a profile
  std::optional<int64_t> from_ms;            // report: the time window
  std::optional<int64_t> to_ms;
  int profile_sites = 10;  // report: sites per list
  enum class FailOn { kNever, kNew, kGrown } fail_on = FailOn::kNever;
};

// True if a report other than the text goes to stdout (--json=-, --format=sarif, ...): the
// text report then stays off stdout.
bool writes_a_format_to_stdout(const Config& config);

// The MEMTRACK_OPTIONS entries for the runtime flags that `config`'s options set, e.g.
// "max_frames=64:follow_exec=0" ("" for none), from the option table's rows for runtime flags.
// Throws Error for a path the runtime could not read back (one with a '"').
std::string runtime_flag_options(const Config& config);

// `value` quoted for MEMTRACK_OPTIONS, so that it may contain ':' or spaces. Throws Error if
// it contains a '"'.
std::string quoted_option_value(const std::string& value);

// Parses argv. Returns false when the caller should exit with *exit_code right away (after
// --help or --version, or a usage error that has already been printed).
bool parse_command_line(int argc, char** argv, Config* /*out*/ config, int* /*out*/ exit_code);

}  // namespace memtrack::cli
