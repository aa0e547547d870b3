// LD_PRELOAD's list of libraries (separated by ':' or ' ', ld.so(8)) and libmemtrack.so's
// entry in it. Runtime-safe: no malloc, no libc.
#pragma once

#include <cstddef>

#include "core/text_buffer.h"

namespace memtrack::rt {

// Calls visit(start, length, is_self) for each non-empty entry of `list`, in order;
// is_self: the entry's file name is libmemtrack.so.
template <typename Visit>
void for_each_preload_entry(const char* list, Visit&& visit) {
  static const char kSelf[] = "libmemtrack.so";
  for (const char* in = list; *in != '\0';) {
    while (*in == ':' || *in == ' ') ++in;
    const char* start = in;
    const char* base = in;
    while (*in != '\0' && *in != ':' && *in != ' ') {
      if (*in == '/') base = in + 1;
      ++in;
    }
    size_t length = static_cast<size_t>(in - start);
    if (length == 0) continue;
    bool is_self = static_cast<size_t>(in - base) == sizeof(kSelf) - 1 &&
                   core::strings_equal(base, sizeof(kSelf) - 1, kSelf);
    visit(start, length, is_self);
  }
}

}  // namespace memtrack::rt
