// LeakSanitizer's options on the CLI's side (lsan_environment.h).
#include "cli/lsan_environment.h"

#include <cstdlib>

#include "cli/option_values.h"
#include "core/lsan_options.h"

namespace memtrack::cli {
namespace {

std::string name_of(const core::LsanEntry& e) {
  return std::string(e.name, e.name_size);
}

std::string value_of(const core::LsanEntry& e) {
  return std::string(e.value, e.value_size);
}

std::string ignored(const std::string& source, const core::LsanEntry& e, const std::string& why) {
  return source + ": " + name_of(e) + " is ignored (" + why + ")";
}

// One report option; returns a note, or "" when it was applied.
std::string apply_report_option(const core::LsanEntry& e, const std::string& source,
                                Config& config) {
  std::string value = value_of(e);
  bool flag = false;
  switch (e.option) {
    case core::LsanOption::kSuppressions:
      if (!value.empty()) config.suppressions.push_back(value);
      return "";
    case core::LsanOption::kExitcode:
      try {
        config.error_exitcode = parse_int(source + " exitcode", value, 0, 255);
      } catch (const Error& error) {
        return ignored(source, e, error.what());
      }
      return "";
    case core::LsanOption::kPrintSuppressions:
      if (!core::parse_lsan_bool(e.value, e.value_size, &flag)) {
        return ignored(source, e, "expected 1/0, true/false or yes/no, not '" + value + "'");
      }
      config.used_suppressions = flag;
      return "";
    case core::LsanOption::kMaxLeaks:
      try {
        config.max_leaks = parse_int(source + " max_leaks", value, 0, 1 << 30);
      } catch (const Error& error) {
        return ignored(source, e, error.what());
      }
      return "";
    case core::LsanOption::kLogPath:
      // LSan writes PATH.PID; "stderr" and "stdout" are its names for those streams.
      if (value == "stderr" || value.empty()) {
        config.log_file.clear();
      } else if (value == "stdout") {
        config.log_file = "-";
      } else {
        config.log_file = value + ".%p";
      }
      return "";
    case core::LsanOption::kOther:
      return ignored(source, e, core::lsan_ignored_reason(e.name, e.name_size));
    default:
      return "";  // the runtime's (use_*, malloc_context_size): it reads them itself
  }
}

// ASAN_OPTIONS=detect_leaks=0 turns LeakSanitizer off in ASan builds; memtrack checks anyway.
std::string asan_detect_leaks_note(const char* asan_options) {
  size_t pos = 0;
  core::LsanEntry e;
  bool detect = true;
  while (core::next_lsan_entry(asan_options, &pos, &e)) {
    if (name_of(e) == "detect_leaks") core::parse_lsan_bool(e.value, e.value_size, &detect);
  }
  if (detect) return "";
  return "ASAN_OPTIONS sets detect_leaks=0, which memtrack ignores: it checks for leaks anyway";
}

}  // namespace

std::vector<std::string> apply_lsan_options(const std::string& text, const std::string& source,
                                            Config& config) {
  std::vector<std::string> notes;
  size_t pos = 0;
  core::LsanEntry e;
  while (core::next_lsan_entry(text.c_str(), &pos, &e)) {
    std::string note = apply_report_option(e, source, config);
    if (!note.empty()) notes.push_back(std::move(note));
  }
  return notes;
}

std::vector<std::string> apply_lsan_environment(Config& config) {
  std::vector<std::string> notes;
  if (const char* lsan = std::getenv("LSAN_OPTIONS")) {
    notes = apply_lsan_options(lsan, "LSAN_OPTIONS", config);
  }
  if (const char* asan = std::getenv("ASAN_OPTIONS")) {
    std::string note = asan_detect_leaks_note(asan);
    if (!note.empty()) notes.push_back(std::move(note));
  }
  return notes;
}

report::Suppressions with_program_lsan_defaults(const report::ResultFile& file,
                                                const report::Suppressions& suppressions,
                                                std::vector<std::string>* notes) {
  report::Suppressions all = suppressions;
  const std::string source = "__lsan_default_options";
  size_t pos = 0;
  core::LsanEntry e;
  while (core::next_lsan_entry(file.lsan_default_options.c_str(), &pos, &e)) {
    if (e.option == core::LsanOption::kSuppressions && e.value_size > 0) {
      try {
        all.append(report::Suppressions::load(value_of(e)));
      } catch (const Error& error) {
        notes->push_back(ignored(source, e, error.what()));
      }
    } else if (e.option == core::LsanOption::kOther) {
      notes->push_back(ignored(source, e, core::lsan_ignored_reason(e.name, e.name_size)));
    } else if (!core::is_lsan_runtime_option(e.option)) {
      notes->push_back(ignored(source, e, "give it in LSAN_OPTIONS or on memtrack's command line"));
    }
  }
  if (!file.lsan_default_suppressions.empty()) {
    try {
      all.append(report::Suppressions::parse(file.lsan_default_suppressions,
                                             "__lsan_default_suppressions"));
    } catch (const Error& error) {
      notes->push_back(std::string("__lsan_default_suppressions are ignored: ") + error.what());
    }
  }
  return all;
}

}  // namespace memtrack::cli
