// Expands flags.inc into defaults, the parser and the help listing.
// Runtime-safe: no allocation; warnings go to a caller-supplied sink.
#include "core/flags.h"

#include "core/sys_linux.h"
#include "core/text_buffer.h"

namespace memtrack::core {
namespace {

struct FlagRange {
  const char* name;
  int min;
  int max;
};

constexpr FlagRange kFlagRanges[] = {
#define MEMTRACK_FLAG(Type, name, default_value, description)
#define MEMTRACK_FLAG_RANGE(name, min, max) {#name, min, max},
#include "core/flags.inc"
#undef MEMTRACK_FLAG_RANGE
#undef MEMTRACK_FLAG
};

constexpr bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

// Compile time only: the range declared for `name`, {name, 0, 0} if none.
constexpr FlagRange range_of(const char* name) {
  for (const FlagRange& range : kFlagRanges) {
    if (same_name(range.name, name)) return range;
  }
  return {name, 0, 0};
}

constexpr FlagInfo kFlagTable[] = {
#define MEMTRACK_FLAG(Type, name, default_value, description) \
  {#name,       FlagType::k##Type##_, #default_value,         \
   description, range_of(#name).min,  range_of(#name).max},
#define kbool_ kBool
#define kint_ kInt
#define kstring_ kString
#include "core/flags.inc"
#undef MEMTRACK_FLAG
};

// Every int flag declares its range, and only int flags do.
constexpr bool ranges_match_types() {
  size_t int_flags = 0;
  for (const FlagInfo& info : kFlagTable) {
    if (info.type != FlagType::kInt) continue;
    ++int_flags;
    bool declared = false;
    for (const FlagRange& range : kFlagRanges)
      declared = declared || same_name(range.name, info.name);
    if (!declared || info.min > info.max) return false;
  }
  return int_flags == sizeof(kFlagRanges) / sizeof(kFlagRanges[0]);
}
static_assert(ranges_match_types(), "flags.inc: one MEMTRACK_FLAG_RANGE per int flag");

void set_default(bool* dst, bool value) {
  *dst = value;
}
void set_default(int* dst, int value) {
  *dst = value;
}
void set_default(char (*dst)[kMaxFlagStringLength], const char* value) {
  size_t n = string_length(value);
  if (n >= kMaxFlagStringLength) n = kMaxFlagStringLength - 1;
  copy_bytes(*dst, value, n);
  (*dst)[n] = '\0';
}

bool assign_value(bool* dst, const char* v, size_t n) {
  if (strings_equal(v, n, "1") || strings_equal(v, n, "true") || strings_equal(v, n, "yes")) {
    *dst = true;
    return true;
  }
  if (strings_equal(v, n, "0") || strings_equal(v, n, "false") || strings_equal(v, n, "no")) {
    *dst = false;
    return true;
  }
  return false;
}

bool assign_value(int* dst, const char* v, size_t n) {
  int64_t value = 0;
  if (!parse_int64(v, n, &value) || value < INT32_MIN || value > INT32_MAX) return false;
  *dst = static_cast<int>(value);
  return true;
}

bool assign_value(char (*dst)[kMaxFlagStringLength], const char* v, size_t n) {
  if (n >= kMaxFlagStringLength) return false;
  copy_bytes(*dst, v, n);
  (*dst)[n] = '\0';
  return true;
}

enum class AssignResult { kOk, kUnknownName, kBadValue };

AssignResult assign(Flags* flags, const char* name, size_t name_len, const char* v, size_t n) {
#define MEMTRACK_FLAG(Type, flag_name, default_value, description) \
  if (strings_equal(name, name_len, #flag_name))                   \
    return assign_value(&flags->flag_name, v, n) ? AssignResult::kOk : AssignResult::kBadValue;
#include "core/flags.inc"
#undef MEMTRACK_FLAG
  return AssignResult::kUnknownName;
}

const char* type_hint(const char* name, size_t name_len) {
  for (const FlagInfo& info : kFlagTable) {
    if (!strings_equal(name, name_len, info.name)) continue;
    switch (info.type) {
      case FlagType::kBool:
        return "expected 1/0, true/false or yes/no";
      case FlagType::kInt:
        return "expected an integer";
      case FlagType::kString:
        return "value too long";
    }
  }
  return "";
}

bool is_separator(char c) {
  return c == ':' || c == ' ' || c == '\t' || c == '\n';
}

void warn_entry(WarningSink warn, const char* what, const char* entry, size_t entry_len,
                const char* detail) {
  FixedText<512> line;
  line.str(what).str(" '").str(entry, entry_len > 200 ? 200 : entry_len).str("'");
  if (detail != nullptr && detail[0] != '\0') line.str(": ").str(detail);
  warn(line.data());
}

}  // namespace

const FlagInfo* flag_table(size_t* count) {
  *count = sizeof(kFlagTable) / sizeof(kFlagTable[0]);
  return kFlagTable;
}

const FlagInfo* find_flag(const char* name) {
  for (const FlagInfo& info : kFlagTable) {
    if (same_name(info.name, name)) return &info;
  }
  return nullptr;
}

void set_defaults(Flags* flags) {
#define MEMTRACK_FLAG(Type, name, default_value, description) \
  set_default(&flags->name, default_value);
#include "core/flags.inc"
#undef MEMTRACK_FLAG
}

int parse_flags(const char* text, Flags* flags, WarningSink warn) {
  if (text == nullptr) return 0;
  int warnings = 0;
  const char* p = text;
  while (*p != '\0') {
    while (is_separator(*p)) ++p;
    if (*p == '\0') break;
    const char* entry = p;
    const char* name = p;
    while (*p != '\0' && *p != '=' && !is_separator(*p)) ++p;
    size_t name_len = static_cast<size_t>(p - name);
    if (*p != '=') {
      warn_entry(warn, "ignoring option without a value", entry, static_cast<size_t>(p - entry),
                 "write name=value");
      ++warnings;
      continue;
    }
    ++p;  // '='
    const char* value = p;
    size_t value_len = 0;
    if (*p == '\'' || *p == '"') {
      char quote = *p++;
      value = p;
      while (*p != '\0' && *p != quote) ++p;
      value_len = static_cast<size_t>(p - value);
      if (*p == quote) ++p;
    } else {
      while (*p != '\0' && !is_separator(*p)) ++p;
      value_len = static_cast<size_t>(p - value);
    }
    size_t entry_len = static_cast<size_t>(p - entry);
    switch (assign(flags, name, name_len, value, value_len)) {
      case AssignResult::kOk:
        break;
      case AssignResult::kUnknownName:
        warn_entry(warn, "ignoring unknown option", entry, entry_len,
                   "MEMTRACK_OPTIONS=help=1 lists the options");
        ++warnings;
        break;
      case AssignResult::kBadValue:
        warn_entry(warn, "ignoring bad value in", entry, entry_len, type_hint(name, name_len));
        ++warnings;
        break;
    }
  }
  return warnings;
}

int validate_flags(Flags* flags, WarningSink warn) {
  Flags defaults;
  set_defaults(&defaults);
  int warnings = 0;
  auto check_range = [&](int* value, int min, int max, const char* name, int fallback) {
    if (*value >= min && *value <= max) return;
    FixedText<256> line;
    line.str("option ").str(name).str("=").i64(*value).str(" is out of range ").i64(min);
    line.str("..").i64(max).str("; using ").i64(fallback);
    warn(line.data());
    *value = fallback;
    ++warnings;
  };
#define MEMTRACK_FLAG(Type, name, default_value, description)
#define MEMTRACK_FLAG_RANGE(name, min, max) \
  check_range(&flags->name, min, max, #name, defaults.name);
#include "core/flags.inc"
#undef MEMTRACK_FLAG_RANGE
#undef MEMTRACK_FLAG
  return warnings;
}

void write_flag_help(int fd) {
  FdWriter out(fd);
  FixedText<128> line;
  line.str("memtrack runtime options (MEMTRACK_OPTIONS=\"name=value:name=value\"):\n");
  out.write(line);
  for (const FlagInfo& info : kFlagTable) {
    FixedText<512> entry;
    entry.str("  ").str(info.name).str(" (");
    entry.str(info.type == FlagType::kBool  ? "bool"
              : info.type == FlagType::kInt ? "int"
                                            : "string");
    entry.str(", default ").str(info.default_text).str(")\n      ").str(info.description);
    entry.chr('\n');
    out.write(entry);
  }
}

}  // namespace memtrack::core
