// Test and benchmark helper (test-only): describes an object loaded in this process the way the
// runtime records it in a result file, so tests can symbolize real runtime addresses.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "symbolize/frame.h"

namespace memtrack::symbolize {

struct LoadedModule {
  RawModule module;         // canonical path, l_addr, PT_LOAD span, GNU build-id
  uint64_t text_start = 0;  // the executable PT_LOAD segment, runtime addresses
  uint64_t text_end = 0;
};

// The first object in dl_iterate_phdr order whose canonical path satisfies `match` (the main
// program is reported as the canonical path of /proc/self/exe), or nullopt.
std::optional<LoadedModule> test_only_find_loaded(
    const std::function<bool(const std::string& path)>& match);

// The loaded object whose canonical path equals that of `path`, or nullopt.
std::optional<LoadedModule> test_only_find_loaded_at(const std::string& path);

}  // namespace memtrack::symbolize
