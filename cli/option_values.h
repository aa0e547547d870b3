// Values of command-line options, checked. Each parser throws memtrack::Error with one line
// naming the option and the bad value ("--num-callers expects a number from 1 to 256, not
// '0'").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "report/model.h"

namespace memtrack::cli {

// "yes" or "no".
bool parse_yes_no(const std::string& name, const std::string& value);
// A decimal integer in [min, max].
int parse_int(const std::string& name, const std::string& value, int min, int max);
// A size in bytes: digits with an optional binary unit, B, KiB, MiB or GiB (K, M, G, KB, MB
// and GB mean the same), e.g. "4096", "512KiB", "1M"; at most `max` bytes.
uint64_t parse_size(const std::string& name, const std::string& value, uint64_t max);
// --check-heap: "off", "full", "sample" or "sample:N" (core/heap_check_mode.h), as the
// runtime's check_heap option spells it: "" for off, "full", "sample:N".
std::string parse_check_heap(const std::string& value);
// valgrind's --show-leak-kinds syntax (definite,indirect,possible,reachable, all, none).
// Unclassified blocks are always included: nothing else could show them.
report::LeakKinds parse_leak_kinds(const std::string& name, const std::string& value);
// memtrack top -d: seconds, fractions allowed.
double parse_seconds(const std::string& name, const std::string& value);
// A duration with an optional unit: ms, s (the default), m or h ("500ms", "30s", "5m",
// "1.5h"), from 10 ms to 24 days, as whole milliseconds.
int parse_duration_ms(const std::string& name, const std::string& value);
// memtrack top --pid: one pid or a comma-separated list, appended to *pids.
void parse_pids(const std::string& value, std::vector<uint32_t>* /*out*/ pids);
// --xml-fd=N and the like (`option` names it in errors) as a file option's value: "-" for
// stdout, else /dev/fd/N. The descriptor must be open in memtrack.
std::string output_file_for_fd(const std::string& option, const std::string& value);
// --log-fd=N as a --log-file value: "-" for stdout, "" for stderr, else /dev/fd/N. The
// descriptor must be open in memtrack.
std::string log_file_for_fd(const std::string& value);

}  // namespace memtrack::cli
