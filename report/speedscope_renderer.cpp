// The leak report as a speedscope file (see speedscope_renderer.h and docs/cli.md, "Output").
#include "report/speedscope_renderer.h"

#include <map>
#include <tuple>

#include "core/result_names.h"
#include "report/collapsed_renderer.h"
#include "report/process_names.h"
#include "report/text_format.h"

namespace memtrack::report {
namespace {

using nlohmann::ordered_json;

// The kinds in the order their profiles are listed: the ones that fail a run first.
constexpr LeakKind kKindOrder[] = {LeakKind::kDefinite, LeakKind::kIndirect, LeakKind::kPossible,
                                   LeakKind::kUnclassified, LeakKind::kReachable};

// shared.frames: one entry per distinct name, file and line, in order of first use.
class FrameTable {
 public:
  size_t index(const Frame& frame) {
    std::string name = collapsed_frame(frame);
    auto key = std::make_tuple(name, frame.file, frame.line);
    auto [it, inserted] = indexes_.emplace(key, frames_.size());
    if (inserted) {
      ordered_json entry = {{"name", name}};
      if (!frame.file.empty()) entry["file"] = frame.file;
      if (frame.line > 0) entry["line"] = frame.line;
      if (frame.line > 0 && frame.column > 0) entry["col"] = frame.column;
      frames_.push_back(std::move(entry));
    }
    return it->second;
  }
  ordered_json take() { return std::move(frames_); }

 private:
  std::map<std::tuple<std::string, std::string, int>, size_t> indexes_;
  ordered_json frames_ = ordered_json::array();
};

// The profile of one process's groups of one kind, or null when it has none. `name`: the
// process's stable name (process_names.h).
ordered_json kind_profile(const ProcessReport& process, const std::string& name, LeakKind kind,
                          FrameTable& frames) {
  ordered_json samples = ordered_json::array();
  ordered_json weights = ordered_json::array();
  uint64_t total = 0;
  for (const LeakGroup& group : process.leaks) {
    if (group.kind != kind || group.runtime_internal) continue;
    ordered_json sample = ordered_json::array();
    for (size_t i = printed_frame_count(group.stack); i-- > 0;) {
      sample.push_back(frames.index(group.stack[i]));
    }
    samples.push_back(std::move(sample));
    weights.push_back(group.bytes);
    total += group.bytes;
  }
  if (samples.empty()) return nullptr;
  return {{"type", "sampled"},
          {"name", name + " " + core::leak_kind_phrase(kind)},
          {"unit", "bytes"},
          {"startValue", 0},
          {"endValue", total},
          {"samples", std::move(samples)},
          {"weights", std::move(weights)}};
}

}  // namespace

ordered_json to_speedscope(const Report& report, const SpeedscopeOptions& options) {
  FrameTable frames;
  ordered_json profiles = ordered_json::array();
  std::vector<std::string> names = stable_process_names(report.processes, ProcessNaming::kProgram);
  for (size_t p = 0; p < report.processes.size(); ++p) {
    for (LeakKind kind : kKindOrder) {
      if (!options.show_kinds.contains(kind)) continue;
      ordered_json profile = kind_profile(report.processes[p], names[p], kind, frames);
      if (!profile.is_null()) profiles.push_back(std::move(profile));
    }
  }
  std::string name = "memtrack leaks";
  if (!names.empty()) name += ": " + names.front();
  return {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
          {"shared", {{"frames", frames.take()}}},
          {"profiles", std::move(profiles)},
          {"name", name},
          {"activeProfileIndex", 0},
          {"exporter", "memtrack " + (options.version.empty() ? "?" : options.version)}};
}

void render_speedscope(const Report& report, std::ostream& out, const SpeedscopeOptions& options) {
  out << to_speedscope(report, options)
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
      << '\n';
}

}  // namespace memtrack::report
