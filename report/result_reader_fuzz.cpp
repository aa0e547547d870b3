// libFuzzer target for the result-file reader: any input must either decode or be rejected
// with memtrack::Error; a crash, hang, sanitizer report or other exception is a bug.
#include <cstddef>
#include <cstdint>

#include "report/result_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    memtrack::report::ResultFile file = memtrack::report::parse_result({data, size}, "fuzz");
    (void)file;
  } catch (const memtrack::Error&) {
  }
  return 0;
}
