// The source lines around the program frames of a report, read at report time, so the HTML
// report can show them wherever it is opened (a CI artifact has no source tree beside it).
// Ordinary C++ (reads files; may allocate).
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "report/model.h"

namespace memtrack::report {

struct SnippetOptions {
  int context = 3;                            // lines before and after each frame's line
  size_t max_lines = 60000;                   // over the whole report; later frames get none
  size_t max_file_bytes = 8 * 1024 * 1024;    // larger files are not read
  size_t max_line_chars = 300;                // longer lines are cut
  LeakKinds show_kinds = kDefaultShownKinds;  // the listed groups, as in the JSON report
};

// {"path": {"LINE": "text", ...}, ...}: for each printed frame (printed_frame_count) with a
// file and line, outside the C/C++ runtime's modules, of the listed leak groups, errors,
// descriptor sites and crashes of every process and check, the lines from line - context to
// line + context that exist, when the file is readable now (paths as the frames name them,
// relative ones from the current directory). Files and lines in order of first use.
nlohmann::ordered_json source_snippets(const Report& report, const SnippetOptions& options = {});

}  // namespace memtrack::report
