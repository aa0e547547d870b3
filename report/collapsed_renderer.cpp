// Collapsed stacks (see collapsed_renderer.h and docs/cli.md, "Output").
#include "report/collapsed_renderer.h"

#include <map>
#include <vector>

#include "report/process_names.h"
#include "report/text_format.h"

namespace memtrack::report {
namespace {

std::string sanitized(std::string name) {
  for (char& c : name) {
    if (c == ';') c = ':';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return name;
}

// `root`: the process's own root frame, its program's file name (process_names.h: the same in
// every run, so flame graphs of two runs can be compared).
std::string stack_line(const std::string& root, const std::vector<Frame>& stack) {
  std::string line = sanitized(root);
  for (size_t i = printed_frame_count(stack); i-- > 0;) line += ";" + collapsed_frame(stack[i]);
  return line;
}

}  // namespace

std::string collapsed_frame(const Frame& frame) {
  if (!frame.function.empty()) return sanitized(frame.function);
  std::string module(path_basename(frame.module));
  return sanitized("?? (" + (module.empty() ? std::string("?") : module) + ")");
}

void render_collapsed(const Report& report, std::ostream& out, const CollapsedOptions& options) {
  std::vector<std::string> order;
  std::map<std::string, uint64_t> bytes;
  std::vector<std::string> roots = stable_process_names(report.processes, ProcessNaming::kProgram);
  for (size_t p = 0; p < report.processes.size(); ++p) {
    for (const LeakGroup& group : report.processes[p].leaks) {
      if (!options.show_kinds.contains(group.kind) || group.runtime_internal) continue;
      std::string line = stack_line(roots[p], group.stack);
      auto [it, inserted] = bytes.emplace(line, 0);
      if (inserted) order.push_back(line);
      it->second += group.bytes;
    }
  }
  for (const std::string& line : order) out << line << ' ' << bytes[line] << '\n';
}

}  // namespace memtrack::report
