// Stable names of a report's processes (process_names.h).
#include "report/process_names.h"

#include <map>

#include "report/text_format.h"

namespace memtrack::report {

std::vector<std::string> stable_process_names(const std::vector<ProcessReport>& processes,
                                              ProcessNaming naming) {
  std::vector<std::string> names;
  names.reserve(processes.size());
  std::map<std::string, size_t> seen;
  for (const ProcessReport& p : processes) {
    std::string name;
    if (naming == ProcessNaming::kCommand) {
      name = format_command(p.command);
    } else {
      name = p.command.empty() ? "?" : std::string(path_basename(p.command.front()));
    }
    if (name.empty()) name = "?";
    size_t repeat = ++seen[name];
    names.push_back(repeat == 1 ? name : name + " #" + std::to_string(repeat));
  }
  return names;
}

}  // namespace memtrack::report
