// LeakSanitizer's options on the CLI's side: LSAN_OPTIONS for memtrack run (the options that
// act on the report: suppressions, exitcode, print_suppressions, max_leaks, log_path), and
// what a program's __lsan_default_options() and __lsan_default_suppressions() add to the
// suppressions of its own report. The options that act on the leak scan are the runtime's
// (core/lsan_options.h, runtime.md). The table of all: docs/switching.md.
#pragma once

#include <string>
#include <vector>

#include "cli/options.h"
#include "report/raw_model.h"
#include "report/suppressions.h"

namespace memtrack::cli {

// Applies the report options of `text` (LSAN_OPTIONS syntax) to `config`. Returns one note
// per option that has no effect under memtrack, or has a bad value, without the
// "memtrack: note: " prefix: "LSAN_OPTIONS: report_objects is ignored (...)".
std::vector<std::string> apply_lsan_options(const std::string& text, const std::string& source,
                                            Config& config);

// memtrack run: LSAN_OPTIONS from the environment, applied before the command line (which
// wins), and a note when ASAN_OPTIONS turns leak detection off. Returns the notes.
std::vector<std::string> apply_lsan_environment(Config& config);

// The suppressions for one process: `suppressions` plus what its program's
// __lsan_default_suppressions() returned and the suppressions=FILE of its
// __lsan_default_options() (file.lsan_default_*), as LeakSanitizer adds them. Problems (a
// malformed text, an unreadable file, an option memtrack ignores there) become notes
// appended to *notes; they never fail the run.
report::Suppressions with_program_lsan_defaults(const report::ResultFile& file,
                                                const report::Suppressions& suppressions,
                                                std::vector<std::string>* /*out*/ notes);

}  // namespace memtrack::cli
