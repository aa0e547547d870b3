// libFuzzer target for the /proc parsers of memtrack top: processes choose their comm and
// command line, and files are cut short when a process exits, so any bytes must parse or come
// back as missing. The first byte picks the parser (stat, status, statm, smaps_rollup,
// cmdline); the rest is the file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proc/proc_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      (void)memtrack::top::try_parse_stat(text);
      break;
    case 1:
      (void)memtrack::top::parse_status(text);
      break;
    case 2:
      (void)memtrack::top::try_parse_statm_resident_pages(text);
      break;
    case 3:
      (void)memtrack::top::try_parse_smaps_rollup(text);
      break;
    default:
      (void)memtrack::top::parse_cmdline(text);
      break;
  }
  return 0;
}
