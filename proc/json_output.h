// memtrack top --json: the selected processes with their threads, as one JSON document
// (schema in docs/cli.md). Pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proc/view.h"

namespace memtrack::top {

// The document for `rows` (thread rows are ignored: every process lists all its threads),
// indented by 2, ending in '\n'. Unknown memory values are null.
std::string format_json(const std::vector<ViewRow>& rows, uint64_t ticks_per_second);

}  // namespace memtrack::top
