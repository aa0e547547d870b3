// LeakSanitizer's options ("name=value:name=value", as LSAN_OPTIONS and a program's
// __lsan_default_options() give them) and what each one becomes under memtrack. Shared by
// the runtime (the options that change the scan) and the CLI (those that change the report).
// Runtime-safe: never allocates; the text is read in place.
#pragma once

#include <cstddef>

#include "core/flags.h"

namespace memtrack::core {

// The LeakSanitizer options memtrack gives a meaning (docs/switching.md has the table).
enum class LsanOption {
  kSuppressions,       // CLI: another suppressions file
  kExitcode,           // CLI: --error-exitcode
  kPrintSuppressions,  // CLI: list the suppressions used (as -v)
  kMaxLeaks,           // CLI: list at most N leak groups
  kLogPath,            // CLI: --log-file=PATH.%p
  kUseGlobals,         // runtime: scan_globals
  kUseStacks,          // runtime: scan_stacks
  kUseRegisters,       // runtime: scan_registers
  kUseRootRegions,     // runtime: scan_root_regions
  kMallocContextSize,  // runtime: max_frames
  kOther,              // everything else: ignored with a note
};

// One "name=value" entry; name and value point into the parsed text (not NUL-terminated).
struct LsanEntry {
  const char* name = nullptr;
  size_t name_size = 0;
  const char* value = nullptr;
  size_t value_size = 0;
  LsanOption option = LsanOption::kOther;
};

// Reads the entry that starts at or after text[*pos] and moves *pos past it. Entries are
// separated by ':', ',', spaces, tabs or newlines, as sanitizer_common's flag parser does;
// a value may be quoted with ' or ". An entry without '=' has an empty value. Returns false
// at the end of the text (or for a null text).
bool next_lsan_entry(const char* text, size_t* /*in, out*/ pos, LsanEntry* /*out*/ entry);

// LeakSanitizer's spelling of a boolean: 1/0, true/false, yes/no. Returns false otherwise.
bool parse_lsan_bool(const char* value, size_t size, bool* /*out*/ result);

// Applies an entry that changes the runtime's scan to `flags` (use_globals, use_stacks,
// use_registers, use_root_regions, malloc_context_size). Returns false, leaving `flags`
// alone, for an entry of another kind or with a bad value.
bool apply_lsan_runtime_option(const LsanEntry& entry, Flags* flags);

// True for the entries the runtime applies (apply_lsan_runtime_option's kinds).
bool is_lsan_runtime_option(LsanOption option);

// The report-side entries that the runtime's own text report (without memtrack run) can
// honour: max_leaks as max_groups, log_path as log_file "PATH.%p" (LSan writes PATH.PID).
// Returns false, leaving `flags` alone, for other entries and bad values.
bool apply_lsan_standalone_option(const LsanEntry& entry, Flags* flags);

// Why memtrack ignores an option of kind kOther, for the one note line per option:
// a phrase such as "memtrack always reports in its own format". Never null.
const char* lsan_ignored_reason(const char* name, size_t name_size);

}  // namespace memtrack::core
