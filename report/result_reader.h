// Reads and validates the binary result files the runtime writes (docs/format.md). The input
// is untrusted: every size and offset is checked, and anything wrong is one memtrack::Error
// whose message names the file and the problem.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "report/raw_model.h"

namespace memtrack::report {

// Decodes a whole result file held in memory. `name` is used in error messages.
// Throws Error on truncated, corrupt or unsupported input.
ResultFile parse_result(std::span<const uint8_t> data, const std::string& name);

// Decodes the payload of a modules section (section 3), which heap profiles embed too.
// Throws Error naming `name` on malformed input.
std::vector<RawModule> parse_modules_section(std::span<const uint8_t> payload,
                                             const std::string& name);

// Reads and decodes the file at `path`. Throws Error (also when it cannot be read).
ResultFile read_result_file(const std::string& path);

}  // namespace memtrack::report
