// libFuzzer target for MEMTRACK_OPTIONS: parse_flags and validate_flags take any text; they
// may warn, but never crash, overflow a string flag or read past the terminating NUL.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/flags.h"

namespace {
void ignore_warning(const char*) {}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);  // NUL-terminated copy
  memtrack::core::Flags flags;
  memtrack::core::set_defaults(&flags);
  memtrack::core::parse_flags(text.c_str(), &flags, ignore_warning);
  memtrack::core::validate_flags(&flags, ignore_warning);
  return 0;
}
