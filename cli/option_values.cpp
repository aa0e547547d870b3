// Values of command-line options: yes/no, numbers in a range, leak kinds, durations, pids,
// descriptors. Each throws memtrack::Error naming the option and the value.
#include "cli/option_values.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "core/heap_check_mode.h"
#include "report/leak_kinds.h"

namespace memtrack::cli {

bool parse_yes_no(const std::string& name, const std::string& value) {
  if (value == "yes" || value == "1" || value == "true") return true;
  if (value == "no" || value == "0" || value == "false") return false;
  throw Error(name + " expects yes or no, not '" + value + "'");
}

int parse_int(const std::string& name, const std::string& value, int min, int max) {
  size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || n < min || n > max) {
    throw Error(name + " expects a number from " + std::to_string(min) + " to " +
                std::to_string(max) + ", not '" + value + "'");
  }
  return n;
}

std::string parse_check_heap(const std::string& value) {
  core::HeapCheckMode mode;
  const char* error = nullptr;
  if (!core::parse_heap_check_mode(value.c_str(), &mode, &error) || value.empty()) {
    throw Error(std::string("--check-heap ") + error + ", not '" + value + "'");
  }
  switch (mode.kind) {
    case core::HeapCheckMode::Kind::kOff:
      return "";
    case core::HeapCheckMode::Kind::kFull:
      return "full";
    case core::HeapCheckMode::Kind::kSample:
      break;
  }
  return "sample:" + std::to_string(mode.interval);
}

uint64_t parse_size(const std::string& name, const std::string& value, uint64_t max) {
  auto bad = [&]() {
    return Error(name + " expects a size in bytes (4096, 512KiB, 1MiB, ...) of at most " +
                 std::to_string(max) + " bytes, not '" + value + "'");
  };
  size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') ++digits;
  if (digits == 0 || digits > 12) throw bad();
  uint64_t n = std::stoull(value.substr(0, digits));
  std::string unit = value.substr(digits);
  uint64_t scale = 0;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KiB" || unit == "k") {
    scale = uint64_t{1} << 10;
  } else if (unit == "M" || unit == "MB" || unit == "MiB") {
    scale = uint64_t{1} << 20;
  } else if (unit == "G" || unit == "GB" || unit == "GiB") {
    scale = uint64_t{1} << 30;
  } else {
    throw bad();
  }
  if (n > max / scale) throw bad();
  return n * scale;
}

// valgrind's --show-leak-kinds syntax. Unclassified blocks (a runtime without reachability
// scan) are always included: nothing else could show them.
report::LeakKinds parse_leak_kinds(const std::string& name, const std::string& value) {
  std::optional<report::LeakKinds> kinds = report::try_parse_leak_kinds(value);
  if (!kinds) {
    throw Error(name +
                " expects all, none or a comma-separated list of definite, indirect, "
                "possible, reachable, not '" +
                value + "'");
  }
  return kinds->with(report::LeakKind::kUnclassified);
}

// memtrack top -d: seconds, fractions allowed.
double parse_seconds(const std::string& name, const std::string& value) {
  size_t used = 0;
  double seconds = 0;
  try {
    seconds = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || !(seconds >= 0.01 && seconds <= 86400)) {
    throw Error(name + " expects seconds from 0.01 to 86400 (e.g. 0.5), not '" + value + "'");
  }
  return seconds;
}

// A duration: a number with an optional unit, ms, s (the default), m or h ("500ms", "30s",
// "5m", "1.5h"), from 10 ms to 24 days, as whole milliseconds.
int parse_duration_ms(const std::string& name, const std::string& value) {
  size_t used = 0;
  double number = -1;
  try {
    number = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = used > 0 ? value.substr(used) : "";
  double scale = unit == "ms"                ? 1
                 : unit == "" || unit == "s" ? 1000
                 : unit == "m"               ? 60000
                 : unit == "h"               ? 3600000
                                             : -1;
  double ms = number * scale;
  if (used == 0 || scale < 0 || !(ms >= 10 && ms <= 2073600000)) {
    throw Error(name +
                " expects a duration from 10ms to 24 days such as 500ms, 30s, 5m or 1h, not '" +
                value + "'");
  }
  return static_cast<int>(ms + 0.5);
}

// memtrack top --pid: one pid or a comma-separated list, appended to *pids.
void parse_pids(const std::string& value, std::vector<uint32_t>* pids) {
  size_t start = 0;
  do {
    size_t comma = value.find(',', start);
    std::string pid = value.substr(start, comma == std::string::npos ? comma : comma - start);
    pids->push_back(static_cast<uint32_t>(parse_int("--pid", pid, 1, 1 << 30)));
    start = comma == std::string::npos ? comma : comma + 1;
  } while (start != std::string::npos);
}

// --log-fd=N as a --log-file value: "-" for stdout, "" for stderr, else /dev/fd/N.
std::string output_file_for_fd(const std::string& option, const std::string& value) {
  int fd = parse_int(option, value, 0, 1 << 20);
  if (fcntl(fd, F_GETFD) < 0)
    throw Error(option + "=" + value + ": descriptor " + value + " is not open");
  if (fd == STDOUT_FILENO) return "-";
  return "/dev/fd/" + std::to_string(fd);
}

std::string log_file_for_fd(const std::string& value) {
  std::string file = output_file_for_fd("--log-fd", value);
  return file == "/dev/fd/2" ? "" : file;
}

}  // namespace memtrack::cli
