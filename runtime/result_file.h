// Writes the exit result file for the CLI (format: core/result_format.h, docs/format.md).
// Runtime-safe: no malloc; written to a temporary name and renamed, so a reader never sees a
// half-written file.
#pragma once

#include "runtime/leak_report.h"

namespace memtrack::rt {

// Writes <result_dir>/memtrack.<pid>.mtr. Returns false (after one diagnostic) on failure.
bool write_result_file(const char* result_dir, LeakReport& report);

}  // namespace memtrack::rt
