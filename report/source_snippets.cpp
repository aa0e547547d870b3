// Source lines around program frames (see source_snippets.h).
#include "report/source_snippets.h"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/text_format.h"

namespace memtrack::report {
namespace {

class Collector {
 public:
  explicit Collector(const SnippetOptions& options) : options_(options) {}

  void add_stack(const std::vector<Frame>& stack) {
    size_t printed = printed_frame_count(stack);
    for (size_t i = 0; i < printed; ++i) add_frame(stack[i]);
  }

  void add_process(const ProcessReport& process) {
    for (const LeakGroup& group : process.leaks) {
      if (options_.show_kinds.contains(group.kind) && !group.runtime_internal) {
        add_stack(group.stack);
      }
    }
    for (const ErrorReport& error : process.errors) {
      add_stack(error.stack);
      add_stack(error.alloc_stack);
      add_stack(error.free_stack);
    }
    for (const ResourceSite& site : process.resource_sites) add_stack(site.stack);
    if (process.crash) add_stack(process.crash->stack);
  }

  nlohmann::ordered_json take() { return std::move(out_); }

 private:
  struct File {
    bool readable = false;
    std::vector<std::string> lines;
    std::set<int> written;
  };

  void add_frame(const Frame& frame) {
    if (frame.file.empty() || frame.line <= 0 || is_system_runtime_module(frame.module)) return;
    File& file = load(frame.file);
    if (!file.readable) return;
    int last = static_cast<int>(file.lines.size());
    for (int n = frame.line - options_.context; n <= frame.line + options_.context; ++n) {
      if (n < 1 || n > last || file.written.contains(n)) continue;
      if (lines_ >= options_.max_lines) return;
      file.written.insert(n);
      out_[frame.file][std::to_string(n)] = file.lines[static_cast<size_t>(n - 1)];
      ++lines_;
    }
  }

  File& load(const std::string& path) {
    auto [it, inserted] = files_.try_emplace(path);
    File& file = it->second;
    if (!inserted) return file;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<size_t>(st.st_size) > options_.max_file_bytes) {
      return file;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) return file;
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.size() > options_.max_line_chars) line.resize(options_.max_line_chars);
      file.lines.push_back(std::move(line));
    }
    file.readable = true;
    return file;
  }

  const SnippetOptions& options_;
  std::map<std::string, File> files_;
  nlohmann::ordered_json out_ = nlohmann::ordered_json::object();
  size_t lines_ = 0;
};

}  // namespace

nlohmann::ordered_json source_snippets(const Report& report, const SnippetOptions& options) {
  Collector collector(options);
  for (const ProcessReport& process : report.processes) collector.add_process(process);
  for (const ProcessReport& check : report.checks) collector.add_process(check);
  return collector.take();
}

}  // namespace memtrack::report
