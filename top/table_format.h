// The text table of memtrack top, shared by --once and the terminal view: one header line
// and one line per process or thread, cut to a width. Pure functions; no escape codes (the
// terminal view adds its attributes by column).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proc/view.h"

namespace memtrack::top {

// 1234 -> "1234K", 123456 -> "120.6M", 123456789 -> "117.7G"; nullopt -> "-".
std::string format_kb(std::optional<uint64_t> kb);
// Like format_kb with a sign: "+512K", "-1.5M", "0".
std::string format_signed_kb(int64_t kb);
// Growth per minute, signed like format_signed_kb; nullopt -> "-".
std::string format_rate(std::optional<double> kb_per_min);
// CPU time as top's TIME+: minutes:seconds.hundredths ("0:01.25", "61:00.00").
std::string format_cpu_time(uint64_t ticks, uint64_t ticks_per_second);

// The header line, cut to `width` bytes (0: no limit).
std::string format_header(size_t width);

// The line of one row, cut to `width` bytes (0: no limit) at a UTF-8 character boundary.
// A process: PID USER RSS PSS USS SWAP GROWTH /MIN G COMMAND, where G is '^' when it is
// growing. A thread: its TID in the PID column, then "tgid T  S  cpu TIME" across the
// memory columns, and its name in the COMMAND column.
std::string format_row(const ViewRow& row, size_t width, uint64_t ticks_per_second);

// Where a sortable column's title sits in the header: (offset, length).
std::pair<size_t, size_t> header_span(SortColumn column);

// The header and every row, each ending in '\n'.
std::string format_table(const std::vector<ViewRow>& rows, size_t width, uint64_t ticks_per_second);

}  // namespace memtrack::top
