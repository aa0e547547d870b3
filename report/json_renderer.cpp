// The JSON report (see json_renderer.h and docs/json-schema.md).
#include "report/json_renderer.h"

#include "report/suppressions.h"
#include "report/text_format.h"

namespace memtrack::report {

namespace {

using nlohmann::ordered_json;

ordered_json exit_to_json(const ExitInfo& exit) {
  ordered_json out = ordered_json::object();
  switch (exit.how) {
    case ExitInfo::How::kExit:
      out["code"] = exit.code;
      break;
    case ExitInfo::How::kUnderscoreExit:
      out["code"] = exit.code;
      out["how"] = "_exit";
      break;
    case ExitInfo::How::kSignal:
      out["signal"] = exit.signal;
      break;
    case ExitInfo::How::kUnknown:
      out["unknown"] = true;
      break;
  }
  return out;
}

ordered_json summary_to_json(const Summary& s) {
  ordered_json out = ordered_json::object();
  out["allocations"] = s.allocations;
  out["frees"] = s.frees;
  out["bytes_allocated"] = s.bytes_allocated;
  out["peak_bytes"] = s.peak_bytes;
  out["leaked_bytes"] = s.leaked_bytes;
  out["leaked_blocks"] = s.leaked_blocks;
  out["suppressed_bytes"] = s.suppressed_bytes;
  out["suppressed_blocks"] = s.suppressed_blocks;
  out["runtime_internal_bytes"] = s.runtime_internal_bytes;
  out["runtime_internal_blocks"] = s.runtime_internal_blocks;
  out["untracked_allocations"] = s.untracked_allocations;
  out["untracked_bytes"] = s.untracked_bytes;
  return out;
}

ordered_json frame_to_json(const Frame& frame) {
  ordered_json out = ordered_json::object();
  out["address"] = hex(frame.address);
  out["module"] = frame.module;
  out["module_offset"] = hex(frame.module_offset);
  out["function"] = frame.function;
  out["file"] = frame.file;
  out["line"] = frame.line;
  out["column"] = frame.column;
  out["inlined"] = frame.inlined;
  return out;
}

ordered_json groups_to_json(const std::vector<LeakGroup>& groups) {
  ordered_json out = ordered_json::array();
  for (const LeakGroup& group : groups) {
    ordered_json g = ordered_json::object();
    g["kind"] = kind_name(group.kind);
    g["bytes"] = group.bytes;
    g["blocks"] = group.blocks;
    g["suppression"] = suggest_suppression(group);
    ordered_json stack = ordered_json::array();
    for (const Frame& frame : group.stack) stack.push_back(frame_to_json(frame));
    g["stack"] = std::move(stack);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

ordered_json process_to_json(const ProcessReport& process) {
  ordered_json out = ordered_json::object();
  out["pid"] = process.pid;
  out["ppid"] = process.ppid;
  out["command"] = process.command;
  out["exit"] = exit_to_json(process.exit);
  out["summary"] = summary_to_json(process.summary);
  out["leaks"] = groups_to_json(process.leaks);
  out["suppressed"] = groups_to_json(process.suppressed);
  out["notes"] = process.notes;
  return out;
}

ordered_json to_json(const Report& report, const std::string& version) {
  ordered_json out = ordered_json::object();
  out["memtrack"] = {{"version", version}, {"schema", kJsonSchemaVersion}};
  ordered_json processes = ordered_json::array();
  for (const ProcessReport& process : report.processes) {
    processes.push_back(process_to_json(process));
  }
  out["processes"] = std::move(processes);
  return out;
}

void render_json(const Report& report, std::ostream& out, const std::string& version) {
  out << to_json(report, version).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
      << '\n';
}

}  // namespace memtrack::report
