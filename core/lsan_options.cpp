// LeakSanitizer's options and their memtrack meaning (lsan_options.h).
// Runtime-safe: no allocation; reads the text in place.
#include "core/lsan_options.h"

#include <cstdint>

#include "core/text_buffer.h"

namespace memtrack::core {
namespace {

struct NamedOption {
  const char* name;
  LsanOption option;
};

constexpr NamedOption kOptions[] = {
    {"suppressions", LsanOption::kSuppressions},
    {"exitcode", LsanOption::kExitcode},
    {"print_suppressions", LsanOption::kPrintSuppressions},
    {"max_leaks", LsanOption::kMaxLeaks},
    {"log_path", LsanOption::kLogPath},
    {"use_globals", LsanOption::kUseGlobals},
    {"use_stacks", LsanOption::kUseStacks},
    {"use_registers", LsanOption::kUseRegisters},
    {"use_root_regions", LsanOption::kUseRootRegions},
    {"malloc_context_size", LsanOption::kMallocContextSize},
};

struct IgnoredReason {
  const char* name;
  const char* reason;
};

constexpr IgnoredReason kReasons[] = {
    {"detect_leaks", "memtrack always checks for leaks; run the program without it to skip"},
    {"leak_check_at_exit",
     "memtrack always checks at exit (use MEMTRACK_OPTIONS=report_at_exit=0)"},
    {"report_objects", "memtrack groups leaks by allocation stack and keeps no block addresses"},
    {"use_tls", "thread-local storage is scanned with the stack or mapping that holds it"},
    {"use_unaligned", "memtrack reads aligned words only, as memcheck does"},
    {"use_ld_allocations", "ld.so's own blocks are set aside as runtime-internal"},
    {"fast_unwind_on_malloc", "memtrack always unwinds with the DWARF rules (full stacks)"},
    {"fast_unwind_on_fatal", "memtrack always unwinds with the DWARF rules (full stacks)"},
    {"symbolize", "memtrack symbolizes out of process, after the run"},
    {"verbosity", "use memtrack run -v"},
    {"resolution", "memtrack groups leaks by the whole recorded stack"},
    {"log_exe_name", "memtrack names the program in the report header"},
};

bool is_separator(char c) {
  return c == ':' || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

LsanOption option_named(const char* name, size_t size) {
  for (const NamedOption& o : kOptions) {
    if (strings_equal(name, size, o.name)) return o.option;
  }
  return LsanOption::kOther;
}

bool parse_count(const char* value, size_t size, int min, int max, int* out) {
  int64_t n = 0;
  if (!parse_int64(value, size, &n) || n < min || n > max) return false;
  *out = static_cast<int>(n);
  return true;
}

}  // namespace

bool next_lsan_entry(const char* text, size_t* pos, LsanEntry* entry) {
  if (text == nullptr) return false;
  size_t i = *pos;
  while (text[i] != '\0' && is_separator(text[i])) ++i;
  if (text[i] == '\0') {
    *pos = i;
    return false;
  }
  LsanEntry e;
  e.name = text + i;
  while (text[i] != '\0' && text[i] != '=' && !is_separator(text[i])) ++i;
  e.name_size = static_cast<size_t>(text + i - e.name);
  e.value = text + i;
  if (text[i] == '=') {
    ++i;
    char quote = text[i];
    if (quote == '\'' || quote == '"') {
      e.value = text + ++i;
      while (text[i] != '\0' && text[i] != quote) ++i;
      e.value_size = static_cast<size_t>(text + i - e.value);
      if (text[i] == quote) ++i;
    } else {
      e.value = text + i;
      while (text[i] != '\0' && !is_separator(text[i])) ++i;
      e.value_size = static_cast<size_t>(text + i - e.value);
    }
  }
  e.option = option_named(e.name, e.name_size);
  *entry = e;
  *pos = i;
  return true;
}

bool parse_lsan_bool(const char* value, size_t size, bool* result) {
  if (strings_equal(value, size, "1") || strings_equal(value, size, "true") ||
      strings_equal(value, size, "yes")) {
    *result = true;
    return true;
  }
  if (strings_equal(value, size, "0") || strings_equal(value, size, "false") ||
      strings_equal(value, size, "no")) {
    *result = false;
    return true;
  }
  return false;
}

bool is_lsan_runtime_option(LsanOption option) {
  switch (option) {
    case LsanOption::kUseGlobals:
    case LsanOption::kUseStacks:
    case LsanOption::kUseRegisters:
    case LsanOption::kUseRootRegions:
    case LsanOption::kMallocContextSize:
      return true;
    default:
      return false;
  }
}

bool apply_lsan_runtime_option(const LsanEntry& entry, Flags* flags) {
  bool* target = nullptr;
  switch (entry.option) {
    case LsanOption::kUseGlobals:
      target = &flags->scan_globals;
      break;
    case LsanOption::kUseStacks:
      target = &flags->scan_stacks;
      break;
    case LsanOption::kUseRegisters:
      target = &flags->scan_registers;
      break;
    case LsanOption::kUseRootRegions:
      target = &flags->scan_root_regions;
      break;
    case LsanOption::kMallocContextSize:
      return parse_count(entry.value, entry.value_size, 1, kMaxFramesLimit, &flags->max_frames);
    default:
      return false;
  }
  return parse_lsan_bool(entry.value, entry.value_size, target);
}

bool apply_lsan_standalone_option(const LsanEntry& entry, Flags* flags) {
  if (entry.option == LsanOption::kMaxLeaks) {
    return parse_count(entry.value, entry.value_size, 0, INT32_MAX, &flags->max_groups);
  }
  if (entry.option != LsanOption::kLogPath) return false;
  constexpr char kPidSuffix[] = ".%p";
  size_t total = entry.value_size + sizeof(kPidSuffix) - 1;
  if (entry.value_size == 0 || total >= kMaxFlagStringLength) return false;
  copy_bytes(flags->log_file, entry.value, entry.value_size);
  copy_bytes(flags->log_file + entry.value_size, kPidSuffix, sizeof(kPidSuffix));
  return true;
}

const char* lsan_ignored_reason(const char* name, size_t name_size) {
  for (const IgnoredReason& r : kReasons) {
    if (strings_equal(name, name_size, r.name)) return r.reason;
  }
  return "memtrack has no equivalent";
}

}  // namespace memtrack::core
