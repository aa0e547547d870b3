// memtrack top: wires the options to the /proc sampler and to the full-screen view or the
// one-off table and JSON (top/).
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "proc/json_output.h"
#include "proc/proc_files.h"
#include "proc/proc_reader.h"
#include "proc/sampler.h"
#include "proc/user_names.h"
#include "top/table_format.h"
#include "top/tui.h"

namespace memtrack::cli {
namespace {

// --once cuts lines to the terminal, or to $COLUMNS; a pipe gets whole lines (0), as ps does.
size_t output_width() {
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    long n = std::strtol(columns, &end, 10);
    if (*columns != '\0' && *end == '\0' && n > 0) return static_cast<size_t>(n);
  }
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  return 0;
}

void write_stdout(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    throw Error("cannot write to stdout");
  }
}

}  // namespace

int top_command(const Config& config) {
  const TopConfig& t = config.top;
  bool once = t.once || t.json;
  if (!once && t.samples != 1) {
    throw Error("--samples applies to --once and --json only");
  }
  // Choosing the one-off table when there is no terminal would hide a mistake in a script
  // (and never end in a pipeline if it chose the live view): say what to use instead.
  if (!once && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
    throw Error(
        "memtrack top shows a live table only on a terminal; use --once or --json "
        "to print it once");
  }
  std::unique_ptr<top::ProcFiles> files;
  try {
    files = std::make_unique<top::ProcFiles>(t.proc_root);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (--proc-root takes a directory laid out like /proc)");
  }
  top::ProcReader reader(*files);
  top::UserNames users;
  top::SamplerOptions sampling{t.growth_samples};
  // --once/--json --samples N -d S: the script chose the span; every rate is over it.
  if (once) sampling.min_rate_seconds = 0;
  top::Sampler sampler(reader, users, sampling);
  long ticks = sysconf(_SC_CLK_TCK);
  uint64_t ticks_per_second = ticks > 0 ? static_cast<uint64_t>(ticks) : 100;
  if (!once) {
    return top::run_tui(sampler, {t.delay_seconds, t.growth_samples, ticks_per_second, t.view});
  }
  // Each thread costs a file read: read them only for the processes that will be printed.
  top::Sampler::WantThreads want_threads;
  if (t.json || t.view.threads) {
    want_threads = [&t](const top::ProcessRow& row) { return top::is_selected(row, t.view); };
  }
  top::Snapshot snapshot;
  for (int i = 0; i < t.samples; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::duration<double>(t.delay_seconds));
    snapshot = sampler.sample(want_threads);
  }
  std::vector<top::ViewRow> rows = top::arrange(snapshot, t.view);
  write_stdout(t.json ? top::format_json(rows, ticks_per_second)
                      : top::format_table(rows, output_width(), ticks_per_second));
  return 0;
}

}  // namespace memtrack::cli
