// The full-screen view of memtrack top (ncurses): samples every delay, redraws, and reacts
// to keys until 'q' or SIGINT/SIGTERM/SIGHUP. Keys and screen layout: docs/cli.md. Must run
// on the main thread; one at a time.
#pragma once

#include <cstdint>

#include "proc/sampler.h"
#include "proc/view.h"

namespace memtrack::top {

struct TuiOptions {
  double delay_seconds = 1.0;
  int growth_samples = 5;  // only shown in the help screen
  uint64_t ticks_per_second = 100;
  ViewOptions view;  // the starting view; keys change it
};

// Runs the view on the terminal of stdin/stdout. Returns the exit status: 0 after 'q',
// 128+N after signal N. Throws memtrack::Error when the terminal cannot be set up (the
// caller checks for a tty first) or when sampling fails; the terminal is restored first.
int run_tui(Sampler& sampler, TuiOptions options);

}  // namespace memtrack::top
