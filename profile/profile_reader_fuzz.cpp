// libFuzzer target for the heap profile reader and analysis, raw and packed files alike: any
// input must either be analysed or be rejected with memtrack::Error; a crash, hang, sanitizer
// report or other exception is a bug. The reader takes a path, so each input goes through a
// memfd.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "profile/analysis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("profile_fuzz", 0);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    return 0;
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    memtrack::profile::AnalyzeOptions options;
    options.from_us = 1000;
    options.to_us = 200000;
    memtrack::profile::ProfileAnalysis analysis = memtrack::profile::analyze_profile(path, options);
    (void)analysis;
  } catch (const memtrack::Error&) {
  }
  return 0;
}
