// Rendering of the exit report as text. Runtime-safe: no malloc.
#pragma once

#include "core/stack_depot.h"
#include "core/text_buffer.h"
#include "runtime/leakcheck/leak_report.h"
#include "runtime/output/result_file.h"

namespace memtrack::rt {

// Writes the header, the heap summary, the groups (obeying max_groups and
// show_runtime_internal) and the leak summary. `how` names the way the program ended.
void write_text_report(core::FdWriter& out, LeakReport& report, const char* how);

// Standalone mode (no result_dir): a live report as text, to the log.
void write_live_text(const LiveReport& live);

}  // namespace memtrack::rt
