// The runtime's options (declared in flags.inc) and their parser for "name=value:name=value".
// Runtime-safe: parsing never allocates; bad input produces warnings, never aborts.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::core {

inline constexpr size_t kMaxFlagStringLength = 256;
inline constexpr int kMaxFramesLimit = 256;

struct Flags {
#define MEMTRACK_FLAG_bool bool
#define MEMTRACK_FLAG_int int
#define MEMTRACK_FLAG_string char
#define MEMTRACK_FLAG_EXTENT_bool
#define MEMTRACK_FLAG_EXTENT_int
#define MEMTRACK_FLAG_EXTENT_string [kMaxFlagStringLength]
#define MEMTRACK_FLAG(Type, name, default_value, description) \
  MEMTRACK_FLAG_##Type name MEMTRACK_FLAG_EXTENT_##Type;
#include "core/flags.inc"
#undef MEMTRACK_FLAG
};

enum class FlagType : uint8_t { kBool, kInt, kString };

struct FlagInfo {
  const char* name;
  FlagType type;
  const char* default_text;  // the default as it would be written in MEMTRACK_OPTIONS
  const char* description;
  int min;  // kInt: the values it accepts (MEMTRACK_FLAG_RANGE); 0 and 0 for other types
  int max;
};

// The table of all flags, in declaration order.
const FlagInfo* flag_table(size_t* /*out*/ count);

// The flag called `name`, or nullptr. Never allocates.
const FlagInfo* find_flag(const char* name);

void set_defaults(Flags* flags);

// Receives one complete warning line (no trailing newline).
using WarningSink = void (*)(const char* message);

// Parses "name=value" entries separated by ':' or whitespace into `flags`. Values may be
// quoted with ' or ". Unknown names and bad values produce one warning each and leave the
// flag unchanged. Returns the number of warnings. Never allocates.
int parse_flags(const char* text, Flags* flags, WarningSink warn);

// Checks ranges after parsing (MEMTRACK_FLAG_RANGE: max_frames within 1..kMaxFramesLimit and
// so on), resetting
// out-of-range values to their defaults with a warning. Returns the number of warnings.
int validate_flags(Flags* flags, WarningSink warn);

// Writes the help listing (one flag per line: name, type, default, description) to `fd`.
void write_flag_help(int fd);

}  // namespace memtrack::core
