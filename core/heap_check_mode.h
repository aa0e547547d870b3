// The value of --check-heap and of the runtime's check_heap option (docs/heap-errors.md):
// "off", "sample" (one block in 1000), "sample:N" or "full". One parser for the command line
// and the runtime. Runtime-safe: no allocation.
#pragma once

#include <cstdint>

namespace memtrack::core {

struct HeapCheckMode {
  enum class Kind : uint8_t { kOff, kSample, kFull };
  Kind kind = Kind::kOff;
  uint32_t interval = 0;  // kSample: about one allocation in this many is guarded
};

inline constexpr uint32_t kDefaultGuardInterval = 1000;

// Parses `text` (NUL-terminated) into *mode. On failure returns false and sets *error to a
// sentence saying what is accepted (a string literal).
bool parse_heap_check_mode(const char* text, HeapCheckMode* /*out*/ mode,
                           const char** /*out*/ error);

}  // namespace memtrack::core
