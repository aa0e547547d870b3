// Packs a raw heap profile (as the runtime writes it) into the compressed, indexed file that
// memtrack report reads (packed_format.h). Memory: one chunk plus the stacks.
#pragma once

#include <cstdint>
#include <string>

namespace memtrack::profile {

struct PackStats {
  uint64_t events = 0;
  uint64_t raw_bytes = 0;
  uint64_t packed_bytes = 0;
  bool complete = false;  // the process ended normally
};

// Writes `out` from `raw`. A raw file cut short (a process killed by SIGKILL) is packed up
// to its last whole record. Throws Error for an unreadable or corrupt input or an
// unwritable output.
PackStats pack_profile(const std::string& raw, const std::string& out);

}  // namespace memtrack::profile
