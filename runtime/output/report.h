// One leak report, built and sent where it goes: the result directory under memtrack run,
// the log otherwise. Runtime-safe: no malloc; call inside the runtime scope, holding the
// report lock (live/live_thread.h).
#pragma once

#include <cstdint>

#include "runtime/leakcheck/leak_report.h"

namespace memtrack::rt {

// Collects, classifies (unless classify_leaks=0), marks and sorts the leak groups for a
// report. stack_top: see scan_live_blocks. Returns false when memory could not be mapped.
bool build_leak_report(LeakReport& report, uintptr_t stack_top);

// Builds and writes one report. `final`: the process is ending (result file for the CLI);
// otherwise an on-demand check, always as text. Returns the lost bytes found, or -1.
long produce_report(const char* how, int status, bool have_status, bool final, uintptr_t stack_top);

}  // namespace memtrack::rt
