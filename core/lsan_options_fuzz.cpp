// libFuzzer target for LSAN_OPTIONS and __lsan_default_options(): every entry the parser
// returns lies inside the text, and applying them never crashes or leaves a flag out of range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/lsan_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);  // NUL-terminated copy
  const char* begin = text.c_str();
  const char* end = begin + text.size();
  memtrack::core::Flags flags;
  memtrack::core::set_defaults(&flags);
  size_t pos = 0;
  memtrack::core::LsanEntry entry;
  while (memtrack::core::next_lsan_entry(begin, &pos, &entry)) {
    if (entry.name < begin || entry.name + entry.name_size > end || entry.value < begin ||
        entry.value + entry.value_size > end || pos > text.size()) {
      abort();
    }
    memtrack::core::apply_lsan_runtime_option(entry, &flags);
    memtrack::core::lsan_ignored_reason(entry.name, entry.name_size);
  }
  if (flags.max_frames < 1 || flags.max_frames > memtrack::core::kMaxFramesLimit) abort();
  return 0;
}
