// The ncurses view of memtrack top. The table lines come from table_format, so the screen
// and --once never disagree; this file only adds attributes, scrolling and keys.
#include "top/tui.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <clocale>
#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "top/table_format.h"

// ncurses defines move(), erase(), timeout()... as macros unless told not to; std::move
// would not compile.
#define NCURSES_NOMACROS
#include <curses.h>

namespace memtrack::top {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int signal) {
  g_signal = signal;
}

double now_seconds() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Installed before ncurses starts, so ncurses keeps its hands off them; without SA_RESTART,
// so a signal interrupts the wait for a key and the loop sees it.
class SignalHandlers {
 public:
  SignalHandlers() {
    g_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &action, &old_[i]);
  }
  ~SignalHandlers() {
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  SignalHandlers(const SignalHandlers&) = delete;
  SignalHandlers& operator=(const SignalHandlers&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// The curses screen; endwin() on every way out, exceptions included.
class Terminal {
 public:
  Terminal() {
    std::setlocale(LC_CTYPE, "");  // UTF-8 command lines with ncursesw
    screen_ = newterm(nullptr, stdout, stdin);
    if (screen_ == nullptr) {
      const char* term = std::getenv("TERM");
      throw Error(fmt::format("cannot use the terminal (TERM={}); use --once or --json",
                              term ? term : "unset"));
    }
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);  // Esc ends the filter at once instead of after a second
    if (has_colors()) {
      start_color();
      use_default_colors();
      init_pair(kGrowingPair, COLOR_RED, -1);
      init_pair(kThreadPair, COLOR_CYAN, -1);
    }
  }
  ~Terminal() {
    endwin();
    delscreen(screen_);
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  static constexpr short kGrowingPair = 1;
  static constexpr short kThreadPair = 2;

 private:
  SCREEN* screen_ = nullptr;
};

constexpr const char* kFooter =
    "q quit  ? help  < > sort  r reverse  / filter  t threads  T tree  p pause";

std::vector<std::string> help_lines(const TuiOptions& o) {
  return {
      "memtrack top: memory of every process, refreshed every " +
          fmt::format("{:g}", o.delay_seconds) + " s",
      "",
      "Columns",
      "  RSS    resident memory (status VmRSS, or statm)",
      "  PSS    proportional set size: shared pages divided among their users (smaps_rollup)",
      "  USS    unique set size: private clean + private dirty pages (smaps_rollup)",
      "  SWAP   swapped out (status VmSwap)",
      "  GROWTH RSS change since memtrack top first saw the process;  /MIN  the same per minute",
      fmt::format("  G      ^ = RSS grew in each of the last {} samples", o.growth_samples),
      "  -      not readable (another user's process: run as root to see PSS and USS)",
      "  Kernel threads have no user memory: 0. Thread rows: TID, tgid, state, CPU time, name.",
      "",
      "Keys",
      "  < >      previous / next sort column      N  sort by pid   M  by RSS   G  by growth",
      "  r        reverse the order (a new sort column starts largest first or A to Z)",
      "  /        filter by command, name, user or pid; Enter keeps it, Esc clears it",
      "  t        show threads                    T  tree view by parent",
      "  p        pause / resume                  q  quit",
      "  arrows, PgUp, PgDn, Home, End scroll     any key closes this help",
  };
}

class View {
 public:
  View(Sampler& sampler, TuiOptions options) : sampler_(sampler), o_(std::move(options)) {}

  int run() {
    double next_sample = 0;
    while (!quit_ && g_signal == 0) {
      double now = now_seconds();
      if ((!paused_ && now >= next_sample) || resample_) {
        snapshot_ = sample();
        resample_ = false;
        next_sample = now + o_.delay_seconds;
      }
      draw();
      double wait = paused_ ? 1.0 : std::max(0.0, next_sample - now_seconds());
      timeout(static_cast<int>(std::min(wait, 1.0) * 1000) + 1);
      int key = getch();
      if (key != ERR) handle_key(key);
    }
    return g_signal != 0 ? 128 + g_signal : 0;
  }

 private:
  // Threads are read only while they are shown, and only for the processes that pass the
  // filters: on a big machine they are most of the cost of a refresh (docs/performance.md).
  Snapshot sample() {
    if (!o_.view.threads) return sampler_.sample(nullptr);
    const ViewOptions& view = o_.view;
    return sampler_.sample([&view](const ProcessRow& row) { return is_selected(row, view); });
  }

  void draw() {
    rows_ = arrange(snapshot_, o_.view);
    erase();
    if (help_) {
      draw_help();
    } else {
      draw_table();
    }
    refresh();
  }

  void put(int y, const std::string& text, attr_t attributes = A_NORMAL) {
    attron(attributes);
    mvaddnstr(y, 0, text.c_str(), static_cast<int>(text.size()));
    attroff(attributes);
  }

  void draw_table() {
    size_t width = static_cast<size_t>(std::max(COLS, 1));
    size_t shown = static_cast<size_t>(
        std::count_if(rows_.begin(), rows_.end(), [](const ViewRow& r) { return !r.thread; }));
    put(0, cut(status_line(shown), width), A_BOLD);
    std::string header = format_header(0);
    header.resize(std::max(header.size(), width), ' ');
    put(1, cut(header, width), A_REVERSE);
    auto [offset, length] = header_span(o_.view.sort);
    if (offset < width) {
      attron(A_REVERSE | A_BOLD | A_UNDERLINE);
      mvaddnstr(1, static_cast<int>(offset), header.c_str() + offset,
                static_cast<int>(std::min(length, width - offset)));
      attroff(A_REVERSE | A_BOLD | A_UNDERLINE);
    }
    size_t visible = LINES > 3 ? static_cast<size_t>(LINES - 3) : 0;
    scroll_ = std::min(scroll_, rows_.size() > visible ? rows_.size() - visible : 0);
    for (size_t i = 0; i < visible && scroll_ + i < rows_.size(); ++i) {
      const ViewRow& row = rows_[scroll_ + i];
      put(static_cast<int>(i + 2), format_row(row, width, o_.ticks_per_second), attributes(row));
    }
    std::string footer =
        editing_ ? "Filter: " + o_.view.filter + "_   (Enter keeps, Esc clears)" : kFooter;
    put(LINES - 1, cut(footer, width), editing_ ? A_BOLD : A_DIM);
  }

  attr_t attributes(const ViewRow& row) const {
    bool colour = has_colors();
    if (row.thread) return colour ? COLOR_PAIR(Terminal::kThreadPair) : A_DIM;
    if (row.process->growing) {
      return A_BOLD | (colour ? COLOR_PAIR(Terminal::kGrowingPair) : A_NORMAL);
    }
    return A_NORMAL;
  }

  std::string status_line(size_t shown) const {
    std::string line = fmt::format("memtrack top{}  {} of {} processes  sort: {}{}  every {:g} s",
                                   paused_ ? "  PAUSED" : "", shown, snapshot_.processes.size(),
                                   sort_column_name(o_.view.sort),
                                   o_.view.reverse ? " (reversed)" : "", o_.delay_seconds);
    if (!o_.view.filter.empty()) line += "  filter: " + o_.view.filter;
    if (o_.view.threads) line += "  threads";
    if (o_.view.tree) line += "  tree";
    return line;
  }

  static std::string cut(std::string text, size_t width) {
    if (text.size() > width) text.resize(width);
    return text;
  }

  void draw_help() {
    std::vector<std::string> lines = help_lines(o_);
    for (size_t i = 0; i < lines.size() && static_cast<int>(i) < LINES; ++i) {
      put(static_cast<int>(i), cut(lines[i], static_cast<size_t>(std::max(COLS, 1))));
    }
  }

  void handle_key(int key) {
    if (help_) {
      help_ = false;
      return;
    }
    if (editing_) return handle_filter_key(key);
    size_t page = LINES > 4 ? static_cast<size_t>(LINES - 4) : 1;
    switch (key) {
      case 'q':
      case 'Q':
        quit_ = true;
        break;
      case '?':
      case 'h':
        help_ = true;
        break;
      case '<':
      case ',':
        set_sort(next_sort_column(o_.view.sort, -1));
        break;
      case '>':
      case '.':
        set_sort(next_sort_column(o_.view.sort, 1));
        break;
      case 'N':
        set_sort(SortColumn::kPid);
        break;
      case 'M':
        set_sort(SortColumn::kRss);
        break;
      case 'G':
        set_sort(SortColumn::kGrowth);
        break;
      case 'r':
        o_.view.reverse = !o_.view.reverse;
        break;
      case '/':
        editing_ = true;
        break;
      case 't':
        o_.view.threads = !o_.view.threads;
        resample_ = o_.view.threads && !snapshot_.with_threads;  // read them now
        break;
      case 'T':
        o_.view.tree = !o_.view.tree;
        break;
      case 'p':
      case ' ':
        paused_ = !paused_;
        break;
      case KEY_UP:
        scroll_ = scroll_ > 0 ? scroll_ - 1 : 0;
        break;
      case KEY_DOWN:
        ++scroll_;
        break;
      case KEY_PPAGE:
        scroll_ = scroll_ > page ? scroll_ - page : 0;
        break;
      case KEY_NPAGE:
        scroll_ += page;
        break;
      case KEY_HOME:
        scroll_ = 0;
        break;
      case KEY_END:
        scroll_ = rows_.size();
        break;
      default:
        break;  // KEY_RESIZE included: the loop redraws at the new size
    }
  }

  // A new column starts in its natural order (numbers largest first); 'r' flips it.
  void set_sort(SortColumn column) {
    o_.view.sort = column;
    o_.view.reverse = false;
    scroll_ = 0;
  }

  void handle_filter_key(int key) {
    if (key == '\n' || key == '\r' || key == KEY_ENTER) {
      editing_ = false;
      resample_ = o_.view.threads;  // threads of the newly selected processes
    } else if (key == 27) {         // Esc
      editing_ = false;
      o_.view.filter.clear();
      resample_ = o_.view.threads;
    } else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
      if (!o_.view.filter.empty()) o_.view.filter.pop_back();
    } else if (key >= 32 && key < 256 && key != 127) {
      o_.view.filter.push_back(static_cast<char>(key));
    }
    scroll_ = 0;
  }

  Sampler& sampler_;
  TuiOptions o_;
  Snapshot snapshot_;
  std::vector<ViewRow> rows_;
  size_t scroll_ = 0;
  bool paused_ = false;
  bool help_ = false;
  bool editing_ = false;
  bool resample_ = false;
  bool quit_ = false;
};

}  // namespace

int run_tui(Sampler& sampler, TuiOptions options) {
  SignalHandlers signals;
  Terminal terminal;
  return View(sampler, std::move(options)).run();
}

}  // namespace memtrack::top
