// The JSON report (see json_renderer.h and docs/json-schema.md).
#include "report/json_renderer.h"

#include "core/fd_names.h"
#include "core/result_names.h"
#include "core/signal_names.h"
#include "report/gen_suppressions.h"
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
    case ExitInfo::How::kRunning:
      out["running"] = true;
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
  out["definite_bytes"] = s.definite_bytes;
  out["definite_blocks"] = s.definite_blocks;
  out["indirect_bytes"] = s.indirect_bytes;
  out["indirect_blocks"] = s.indirect_blocks;
  out["possible_bytes"] = s.possible_bytes;
  out["possible_blocks"] = s.possible_blocks;
  out["reachable_bytes"] = s.reachable_bytes;
  out["reachable_blocks"] = s.reachable_blocks;
  out["suppressed_bytes"] = s.suppressed_bytes;
  out["suppressed_blocks"] = s.suppressed_blocks;
  out["runtime_internal_bytes"] = s.runtime_internal_bytes;
  out["runtime_internal_blocks"] = s.runtime_internal_blocks;
  out["untracked_allocations"] = s.untracked_allocations;
  out["untracked_bytes"] = s.untracked_bytes;
  out["errors"] = s.errors;
  out["error_occurrences"] = s.error_occurrences;
  out["open_descriptors"] = s.open_descriptors;
  out["suppressed_descriptors"] = s.suppressed_descriptors;
  out["untracked_descriptors"] = s.untracked_descriptors;
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

ordered_json errors_to_json(const std::vector<ErrorReport>& errors) {
  ordered_json out = ordered_json::array();
  for (const ErrorReport& error : errors) {
    ordered_json e = ordered_json::object();
    e["kind"] = core::error_kind_name(error.kind);
    e["address"] = hex(error.address);
    e["occurrences"] = error.occurrences;
    e["description"] = error_description(error);
    if (error.block_start != 0) {
      e["block"] = {{"address", hex(error.block_start)}, {"size", error.block_size}};
    } else {
      e["block"] = nullptr;
    }
    e["alloc_call"] = core::alloc_call_name(error.alloc_call);
    e["free_call"] = core::free_call_name(error.free_call);
    e["stack"] = stack_to_json(error.stack);
    e["alloc_stack"] = stack_to_json(error.alloc_stack);
    e["free_stack"] = stack_to_json(error.free_stack);
    out.push_back(std::move(e));
  }
  return out;
}

// One element per descriptor, site after site.
ordered_json resources_to_json(const std::vector<ResourceSite>& sites,
                               const std::vector<SuggestedSuppression>& suggestions) {
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < sites.size(); ++i) {
    const ResourceSite& site = sites[i];
    ordered_json stack = stack_to_json(site.stack);
    for (const ResourceFacts& r : site.resources) {
      ordered_json e = ordered_json::object();
      e["kind"] = core::resource_kind_name(r.kind);
      e["fd"] = r.fd;
      e["path"] = r.description;
      e["flags"] = resource_flags(r);
      e["stream"] = r.stream;
      e["call"] = r.call;
      e["suppression"] = suggestions[i].lsan;
      e["suppression_block"] = suggestions[i].block;
      e["stack"] = stack;
      out.push_back(std::move(e));
    }
  }
  return out;
}

// The groups of the shown kinds, in their order.
// `suggestions`: parallel to `groups`, or null (suppressed groups: "" entries).
ordered_json groups_to_json(const std::vector<LeakGroup>& groups, LeakKinds show_kinds,
                            const std::vector<SuggestedSuppression>* suggestions) {
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < groups.size(); ++i) {
    const LeakGroup& group = groups[i];
    if (!show_kinds.contains(group.kind)) continue;
    ordered_json g = ordered_json::object();
    g["kind"] = core::leak_kind_name(group.kind);
    g["bytes"] = group.bytes;
    g["blocks"] = group.blocks;
    // In every group, 0 where nothing hangs off it: one shape for all kinds.
    g["indirect_bytes"] = group.indirect_bytes;
    g["indirect_blocks"] = group.indirect_blocks;
    g["suppression"] = suggestions ? (*suggestions)[i].lsan : "";
    g["suppression_block"] = suggestions ? (*suggestions)[i].block : "";
    g["stack"] = stack_to_json(group.stack);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

ordered_json stack_to_json(const std::vector<Frame>& stack) {
  ordered_json out = ordered_json::array();
  for (const Frame& frame : stack) out.push_back(frame_to_json(frame));
  return out;
}

ordered_json crash_to_json(const CrashReport& crash) {
  ordered_json out = ordered_json::object();
  out["signal"] = crash.signal;
  out["name"] = signal_name(crash.signal);
  const char* cause = core::signal_cause(crash.signal, crash.code);
  out["cause"] = cause != nullptr ? cause : "";
  out["code"] = crash.code;
  if (crash.has_address) out["address"] = hex(crash.address);
  out["thread"] = crash.tid;
  out["stack"] = stack_to_json(crash.stack);
  return out;
}

ordered_json process_to_json(const ProcessReport& process, const JsonOptions& options) {
  ordered_json out = ordered_json::object();
  out["pid"] = process.pid;
  out["ppid"] = process.ppid;
  out["command"] = process.command;
  if (!process.occasion.empty()) out["occasion"] = process.occasion;
  out["exit"] = exit_to_json(process.exit);
  out["summary"] = summary_to_json(process.summary);
  out["errors"] = errors_to_json(process.errors);
  ProcessSuggestions suggestions = suggest_suppressions(process);
  if (process.crash) out["crash"] = crash_to_json(*process.crash);
  out["leaks"] = groups_to_json(process.leaks, options.show_kinds, &suggestions.leaks);
  out["suppressed"] = groups_to_json(process.suppressed, options.show_kinds, nullptr);
  if (!process.used_suppressions.empty()) {
    ordered_json used = ordered_json::array();
    for (const UsedSuppression& u : process.used_suppressions) {
      used.push_back({{"name", u.name},
                      {"origin", u.origin},
                      {"groups", u.groups},
                      {"bytes", u.bytes},
                      {"blocks", u.blocks},
                      {"descriptors", u.descriptors}});
    }
    out["used_suppressions"] = std::move(used);
  }
  if (process.tracks_resources) {
    out["resources"] = resources_to_json(process.resource_sites, suggestions.resource_sites);
  }
  out["notes"] = process.notes;
  if (!process.has_leak_data) out["no_data"] = process.no_data_reason;
  return out;
}

ordered_json to_json(const Report& report, const std::string& version, const JsonOptions& options) {
  ordered_json out = ordered_json::object();
  out["memtrack"] = {{"version", version}, {"schema", kJsonSchemaVersion}};
  ordered_json processes = ordered_json::array();
  for (const ProcessReport& process : report.processes) {
    processes.push_back(process_to_json(process, options));
  }
  out["processes"] = std::move(processes);
  if (!report.checks.empty()) {
    ordered_json checks = ordered_json::array();
    for (const ProcessReport& check : report.checks) {
      checks.push_back(process_to_json(check, options));
    }
    out["checks"] = std::move(checks);
  }
  return out;
}

void render_json(const Report& report, std::ostream& out, const std::string& version,
                 const JsonOptions& options) {
  out << to_json(report, version, options)
             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
      << '\n';
}

}  // namespace memtrack::report
