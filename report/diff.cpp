// memtrack diff (see diff.h and docs/cli.md, "memtrack diff").
#include "report/diff.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/error.h"
#include "core/result_names.h"
#include "report/json_renderer.h"
#include "report/text_format.h"

namespace memtrack::report {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

LeakKind parse_kind(const std::string& name, const std::string& source) {
  for (LeakKind kind : {LeakKind::kDefinite, LeakKind::kIndirect, LeakKind::kPossible,
                        LeakKind::kReachable, LeakKind::kUnclassified}) {
    if (name == core::leak_kind_name(kind)) return kind;
  }
  throw Error(source + ": unknown leak kind '" + name + "'");
}

Frame frame_from_json(const json& j) {
  Frame frame;
  frame.module = j.value("module", "");
  frame.function = j.value("function", "");
  frame.file = j.value("file", "");
  frame.line = j.value("line", 0);
  frame.column = j.value("column", 0);
  frame.inlined = j.value("inlined", false);
  return frame;
}

LeakGroup group_from_json(const json& j, const std::string& source) {
  LeakGroup group;
  group.kind = parse_kind(j.at("kind").get<std::string>(), source);
  group.bytes = j.at("bytes").get<uint64_t>();
  group.blocks = j.at("blocks").get<uint64_t>();
  for (const json& frame : j.at("stack")) group.stack.push_back(frame_from_json(frame));
  return group;
}

ProcessReport process_from_json(const json& j, const std::string& source) {
  ProcessReport process;
  process.pid = j.at("pid").get<uint32_t>();
  process.command = j.value("command", std::vector<std::string>{});
  for (const json& group : j.at("leaks")) process.leaks.push_back(group_from_json(group, source));
  return process;
}

using Key = std::pair<LeakKind, std::vector<std::string>>;
struct Sides {
  uint64_t base_bytes = 0, base_blocks = 0, new_bytes = 0, new_blocks = 0;
};

void add_groups(const Report& report, LeakKinds kinds, bool is_base, std::map<Key, Sides>* keys) {
  for (const ProcessReport& process : report.processes) {
    for (const LeakGroup& group : process.leaks) {
      if (!kinds.contains(group.kind) || group.runtime_internal) continue;
      Key key{group.kind, {}};
      // The printed frames: below main is start-up code whose module is the program itself
      // (_start), which would make every group new when the program is renamed.
      size_t count = printed_frame_count(group.stack);
      for (size_t i = 0; i < count; ++i) key.second.push_back(key_frame(group.stack[i]));
      Sides& sides = (*keys)[key];
      (is_base ? sides.base_bytes : sides.new_bytes) += group.bytes;
      (is_base ? sides.base_blocks : sides.new_blocks) += group.blocks;
    }
  }
}

DiffStatus status_of(const Sides& s) {
  if (s.base_blocks == 0 && s.base_bytes == 0) return DiffStatus::kNew;
  if (s.new_blocks == 0 && s.new_bytes == 0) return DiffStatus::kGone;
  auto base = std::tie(s.base_bytes, s.base_blocks);
  auto now = std::tie(s.new_bytes, s.new_blocks);
  return now > base   ? DiffStatus::kGrown
         : now < base ? DiffStatus::kShrunk
                      : DiffStatus::kUnchanged;
}

std::string plural(uint64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

Report read_json_report(std::istream& in, const std::string& source) {
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("memtrack") || !j.contains("processes")) {
    throw Error(source + ": not a memtrack JSON report");
  }
  Report report;
  try {
    for (const json& process : j.at("processes")) {
      report.processes.push_back(process_from_json(process, source));
    }
  } catch (const json::exception& e) {
    throw Error(source + ": malformed memtrack JSON report (" + e.what() + ")");
  }
  return report;
}

std::string key_frame(const Frame& frame) {
  std::string where = basename_of(frame.file.empty() ? frame.module : frame.file);
  return (frame.function.empty() ? "??" : frame.function) + " (" + where + ")";
}

const char* diff_status_name(DiffStatus status) {
  switch (status) {
    case DiffStatus::kNew:
      return "new";
    case DiffStatus::kGrown:
      return "grown";
    case DiffStatus::kShrunk:
      return "shrunk";
    case DiffStatus::kGone:
      return "gone";
    case DiffStatus::kUnchanged:
      return "unchanged";
  }
  return "?";
}

uint64_t Diff::count(DiffStatus status) const {
  return static_cast<uint64_t>(std::count_if(
      entries.begin(), entries.end(), [status](const DiffEntry& e) { return e.status == status; }));
}

Diff diff_reports(const Report& base, const Report& now, LeakKinds kinds) {
  std::map<Key, Sides> keys;
  add_groups(base, kinds, true, &keys);
  add_groups(now, kinds, false, &keys);
  Diff diff;
  for (auto& [key, sides] : keys) {
    diff.entries.push_back({status_of(sides), key.first, key.second, sides.base_bytes,
                            sides.base_blocks, sides.new_bytes, sides.new_blocks});
  }
  std::stable_sort(diff.entries.begin(), diff.entries.end(),
                   [](const DiffEntry& a, const DiffEntry& b) {
                     uint64_t a_bytes = std::max(a.base_bytes, a.new_bytes);
                     uint64_t b_bytes = std::max(b.base_bytes, b.new_bytes);
                     return std::tie(a.status, b_bytes) < std::tie(b.status, a_bytes);
                   });
  return diff;
}

void render_diff_text(const Diff& diff, std::ostream& out) {
  out << "Leak groups: ";
  const char* separator = "";
  for (DiffStatus status : {DiffStatus::kNew, DiffStatus::kGrown, DiffStatus::kShrunk,
                            DiffStatus::kGone, DiffStatus::kUnchanged}) {
    out << separator << diff.count(status) << " " << diff_status_name(status);
    separator = ", ";
  }
  out << "\n";
  for (const DiffEntry& e : diff.entries) {
    if (e.status == DiffStatus::kUnchanged) continue;
    out << "\n"
        << diff_status_name(e.status) << " (" << core::leak_kind_name(e.kind)
        << "): " << plural(e.base_bytes, "byte") << " in " << plural(e.base_blocks, "block")
        << " -> " << plural(e.new_bytes, "byte") << " in " << plural(e.new_blocks, "block") << "\n";
    for (size_t i = 0; i < e.frames.size(); ++i) out << "    #" << i << " " << e.frames[i] << "\n";
  }
}

ordered_json diff_to_json(const Diff& diff, const std::string& version) {
  ordered_json out = ordered_json::object();
  out["memtrack"] = {{"version", version}, {"schema", kJsonSchemaVersion}};
  ordered_json counts = ordered_json::object();
  for (DiffStatus status : {DiffStatus::kNew, DiffStatus::kGrown, DiffStatus::kShrunk,
                            DiffStatus::kGone, DiffStatus::kUnchanged}) {
    counts[diff_status_name(status)] = diff.count(status);
  }
  out["diff"] = std::move(counts);
  ordered_json entries = ordered_json::array();
  for (const DiffEntry& e : diff.entries) {
    ordered_json entry = ordered_json::object();
    entry["status"] = diff_status_name(e.status);
    entry["kind"] = core::leak_kind_name(e.kind);
    entry["base_bytes"] = e.base_bytes;
    entry["base_blocks"] = e.base_blocks;
    entry["new_bytes"] = e.new_bytes;
    entry["new_blocks"] = e.new_blocks;
    entry["frames"] = e.frames;
    entries.push_back(std::move(entry));
  }
  out["entries"] = std::move(entries);
  return out;
}

}  // namespace memtrack::report
