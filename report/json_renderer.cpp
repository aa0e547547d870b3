// The JSON report (see json_renderer.h and docs/json-schema.md).
#include "report/json_renderer.h"

#include "core/fd_names.h"
#include "core/result_names.h"
#include "core/signal_names.h"
#include "report/gen_suppressions.h"
#include "report/json_text.h"
#include "report/retention_text.h"
#include "report/text_format.h"

namespace memtrack::report {

namespace {

using nlohmann::ordered_json;

void write_exit(JsonText& j, const ExitInfo& exit) {
  j.begin_object();
  switch (exit.how) {
    case ExitInfo::How::kExit:
      j.member("code", exit.code);
      break;
    case ExitInfo::How::kUnderscoreExit:
      j.member("code", exit.code);
      j.member("how", "_exit");
      break;
    case ExitInfo::How::kSignal:
      j.member("signal", exit.signal);
      break;
    case ExitInfo::How::kUnknown:
      j.member("unknown", true);
      break;
    case ExitInfo::How::kRunning:
      j.member("running", true);
      break;
  }
  j.end_object();
}

void write_amount(JsonText& j, const std::string& name, const Amount& amount) {
  j.member(name + "_bytes", amount.bytes);
  j.member(name + "_blocks", amount.blocks);
}

void write_summary(JsonText& j, const Summary& s) {
  j.begin_object();
#define MEMTRACK_COUNTER(Enumerator, name, description) j.member(#name, s.name);
#include "core/stats.inc"
#undef MEMTRACK_COUNTER
  write_amount(j, "leaked", s.leaked());
  // Unclassified groups are leaked_* minus the classified kinds, as in the schema.
  for (LeakKind kind :
       {LeakKind::kDefinite, LeakKind::kIndirect, LeakKind::kPossible, LeakKind::kReachable}) {
    write_amount(j, core::leak_kind_name(kind), s.of_kind(kind));
  }
  write_amount(j, "suppressed", s.suppressed);
  write_amount(j, "runtime_internal", s.runtime_internal);
  j.member("errors", s.errors);
  j.member("error_occurrences", s.error_occurrences);
  j.member("open_descriptors", s.open_descriptors);
  j.member("suppressed_descriptors", s.suppressed_descriptors);
  j.member("untracked_descriptors", s.untracked_descriptors);
  j.end_object();
}

void write_frame(JsonText& j, const Frame& frame) {
  j.begin_object();
  j.member("address", hex(frame.address));
  j.member("module", frame.module);
  j.member("module_offset", hex(frame.module_offset));
  j.member("function", frame.function);
  j.member("file", frame.file);
  j.member("line", frame.line);
  j.member("column", frame.column);
  j.member("inlined", frame.inlined);
  j.end_object();
}

void write_stack(JsonText& j, const std::vector<Frame>& stack) {
  j.begin_array();
  for (const Frame& frame : stack) write_frame(j, frame);
  j.end_array();
}

void write_errors(JsonText& j, const std::vector<ErrorReport>& errors) {
  j.begin_array();
  for (const ErrorReport& error : errors) {
    j.begin_object();
    j.member("kind", core::error_kind_name(error.kind));
    j.member("address", hex(error.address));
    j.member("occurrences", error.occurrences);
    j.member("description", error_description(error));
    j.key("block");
    if (error.block_start != 0) {
      j.begin_object();
      j.member("address", hex(error.block_start));
      j.member("size", error.block_size);
      j.end_object();
    } else {
      j.null();
    }
    j.member("alloc_call", core::alloc_call_name(error.alloc_call));
    j.member("free_call", core::free_call_name(error.free_call));
    if (error.kind == ErrorKind::kInvalidRead || error.kind == ErrorKind::kInvalidWrite) {
      j.member("block_freed", error.detail);
    } else if (error.kind == ErrorKind::kWriteOutsideBlock) {
      j.member("found_at", error.detail ? "exit" : "free");
    } else if (error.kind == ErrorKind::kWriteAfterFree) {
      j.member("found_at", error.detail ? "exit" : "quarantine");
    }
    write_stack(j.key("stack"), error.stack);
    write_stack(j.key("alloc_stack"), error.alloc_stack);
    write_stack(j.key("free_stack"), error.free_stack);
    j.end_object();
  }
  j.end_array();
}

// One element per descriptor, site after site.
void write_resources(JsonText& j, const std::vector<ResourceSite>& sites,
                     const std::vector<SuggestedSuppression>& suggestions) {
  j.begin_array();
  for (size_t i = 0; i < sites.size(); ++i) {
    const ResourceSite& site = sites[i];
    for (const ResourceFacts& r : site.resources) {
      j.begin_object();
      j.member("kind", core::resource_kind_name(r.kind));
      j.member("fd", r.fd);
      j.member("path", r.description);
      j.member("flags", resource_flags(r));
      j.member("stream", r.stream);
      j.member("call", r.call);
      j.member("suppression", suggestions[i].lsan);
      j.member("suppression_block", suggestions[i].block);
      write_stack(j.key("stack"), site.stack);
      j.end_object();
    }
  }
  j.end_array();
}

// The groups of the shown kinds, in their order.
// `suggestions`: parallel to `groups`, or null (suppressed groups: "" entries).
void write_groups(JsonText& j, const std::vector<LeakGroup>& groups, LeakKinds show_kinds,
                  const std::vector<SuggestedSuppression>* suggestions) {
  j.begin_array();
  for (size_t i = 0; i < groups.size(); ++i) {
    const LeakGroup& group = groups[i];
    if (!show_kinds.contains(group.kind)) continue;
    j.begin_object();
    j.member("kind", core::leak_kind_name(group.kind));
    j.member("bytes", group.bytes);
    j.member("blocks", group.blocks);
    // In every group, 0 where nothing hangs off it: one shape for all kinds.
    j.member("indirect_bytes", group.indirect_bytes);
    j.member("indirect_blocks", group.indirect_blocks);
    // The sampled mode only (docs/json-schema.md): bytes and blocks are the sampled blocks.
    if (group.sampling == LeakGroup::Sampling::kEstimated) {
      j.member("sampling", "estimated");
      j.member("estimated_bytes", group.estimated_bytes);
      j.member("estimated_blocks", group.estimated_blocks);
    } else if (group.sampling == LeakGroup::Sampling::kNotSampled) {
      j.member("sampling", "not_sampled");
    }
    j.member("suppression", suggestions ? (*suggestions)[i].lsan : "");
    j.member("suppression_block", suggestions ? (*suggestions)[i].block : "");
    write_stack(j.key("stack"), group.stack);
    j.end_object();
  }
  j.end_array();
}

void write_crash(JsonText& j, const CrashReport& crash) {
  j.begin_object();
  j.member("signal", crash.signal);
  j.member("name", signal_name(crash.signal));
  const char* cause = core::signal_cause(crash.signal, crash.code);
  j.member("cause", cause != nullptr ? cause : "");
  j.member("code", crash.code);
  if (crash.has_address) j.member("address", hex(crash.address));
  j.member("thread", crash.tid);
  write_stack(j.key("stack"), crash.stack);
  j.end_object();
}

// memtrack snapshot --retainers ADDR: one block, its dominator chain and its referrers
// (docs/json-schema.md, "block_retention").
void write_block_link(JsonText& j, const BlockLink& link) {
  static constexpr const char* kLinkKinds[] = {"block", "root", "several_roots"};
  j.begin_object();
  j.member("kind", kLinkKinds[static_cast<size_t>(link.kind)]);
  if (link.kind == core::result::LinkKind::kBlock) {
    j.member("start", hex(link.start));
    j.member("size", link.size);
    j.member("site", site_phrase(link.stack));
    write_stack(j.key("stack"), link.stack);
    j.member("offset", link.offset);
  } else {
    j.member("root", link.root);
    if (link.offset != 0) j.member("address", hex(link.offset));
  }
  j.end_object();
}

void write_block_retention(JsonText& j, const BlockRetention& block) {
  j.begin_object();
  j.member("address", hex(block.address));
  j.member("found", block.found);
  if (block.found) {
    j.member("kind", core::leak_kind_name(block.kind));
    j.member("start", hex(block.start));
    j.member("size", block.size);
    j.member("retained_bytes", block.retained_bytes);
    j.member("retained_blocks", block.retained_blocks);
    j.member("site", site_phrase(block.stack));
    write_stack(j.key("stack"), block.stack);
    j.key("chain").begin_array();
    for (const BlockLink& link : block.chain) write_block_link(j, link);
    j.end_array();
    j.key("referrers").begin_array();
    for (const BlockLink& link : block.referrers) write_block_link(j, link);
    j.end_array();
  }
  j.end_object();
}

void write_strings(JsonText& j, const std::vector<std::string>& strings) {
  j.begin_array();
  for (const std::string& s : strings) j.string(s);
  j.end_array();
}

// memtrack run --show-retainers: the roots that keep something, and every still-reachable
// group with what holds it (docs/json-schema.md, "retention").
void write_retention(JsonText& j, const Retention& retention, uint32_t pid) {
  static constexpr const char* kRootKinds[] = {"data",    "stack",  "registers", "region",
                                               "ignored", "stream", "old_heap",  "tls"};
  static constexpr const char* kHolderKinds[] = {"site", "root", "several_roots", "runtime"};
  j.begin_object();
  j.member("approximate", retention.approximate);
  j.member("passes", retention.passes);
  j.member("shared_bytes", retention.shared_bytes);
  j.member("shared_blocks", retention.shared_blocks);
  j.key("roots").begin_array();
  for (const Retainer& r : retention.retainers) {
    j.begin_object();
    j.member("kind", kRootKinds[static_cast<size_t>(r.kind)]);
    j.member("name", retainer_name(r, pid));
    j.member("symbol", r.symbol);
    j.member("module", r.module);
    j.member("file", r.declared.file);
    j.member("line", r.declared.line);
    j.member("address", hex(r.address));
    j.member("size", r.size);
    j.member("thread", r.tid);
    if (r.frame != core::result::kNoFrame) j.member("frame", r.frame);
    j.member("retained_bytes", r.retained_bytes);
    j.member("retained_blocks", r.retained_blocks);
    j.end_object();
  }
  j.end_array();
  j.key("groups").begin_array();
  for (const RetentionGroup& g : retention.groups) {
    j.begin_object();
    j.member("bytes", g.bytes);
    j.member("blocks", g.blocks);
    j.member("retained_bytes", g.retained_bytes);
    j.member("retained_blocks", g.retained_blocks);
    j.member("holder_kind", kHolderKinds[static_cast<size_t>(g.holder_kind)]);
    if (g.holder_kind == core::result::HolderKind::kRetainer) j.member("holder_root", g.holder);
    if (g.root != core::result::kNoRetainer) j.member("root", g.root);
    if (g.parent != core::result::kNoGroup) j.member("parent", g.parent);
    j.member("held_by", holder_chain(retention, g, pid));
    auto site = retention.sites.find(g.stack_id);
    j.member("site", site != retention.sites.end() ? site_phrase(site->second) : "");
    if (g.holder_kind == core::result::HolderKind::kSite) {
      auto holder = retention.sites.find(g.holder);
      j.member("holder_site", holder != retention.sites.end() ? site_phrase(holder->second) : "");
      if (holder != retention.sites.end()) write_stack(j.key("holder_stack"), holder->second);
    }
    if (site != retention.sites.end()) write_stack(j.key("stack"), site->second);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

ordered_json parsed(const std::string& text) {
  return ordered_json::parse(text, nullptr, true, false);
}

}  // namespace

void write_process_json(JsonText& j, const ProcessReport& process, const JsonOptions& options,
                        SuggestionCache& suggestion_cache) {
  j.begin_object();
  j.member("pid", process.pid);
  j.member("ppid", process.ppid);
  write_strings(j.key("command"), process.command);
  if (!process.occasion.empty()) j.member("occasion", process.occasion);
  write_exit(j.key("exit"), process.exit);
  write_summary(j.key("summary"), process.summary);
  if (process.sample_interval != 0) {
    j.key("sampling").begin_object();
    j.member("interval_bytes", process.sample_interval);
    j.member("sampled_allocations", process.sampled_allocations);
    j.end_object();
  }
  write_errors(j.key("errors"), process.errors);
  const ProcessSuggestions& suggestions = suggestion_cache.of(process);
  if (process.crash) write_crash(j.key("crash"), *process.crash);
  write_groups(j.key("leaks"), process.leaks, options.show_kinds, &suggestions.leaks);
  write_groups(j.key("suppressed"), process.suppressed, options.show_kinds, nullptr);
  if (!process.used_suppressions.empty()) {
    j.key("used_suppressions").begin_array();
    for (const UsedSuppression& u : process.used_suppressions) {
      j.begin_object();
      j.member("name", u.name);
      j.member("origin", u.origin);
      j.member("groups", u.groups);
      j.member("bytes", u.bytes);
      j.member("blocks", u.blocks);
      j.member("descriptors", u.descriptors);
      j.end_object();
    }
    j.end_array();
  }
  if (process.tracks_resources) {
    write_resources(j.key("resources"), process.resource_sites, suggestions.resource_sites);
  }
  if (process.retention) write_retention(j.key("retention"), *process.retention, process.pid);
  if (process.block_retention) {
    write_block_retention(j.key("block_retention"), *process.block_retention);
  }
  write_strings(j.key("notes"), process.notes);
  if (!process.has_leak_data) j.member("no_data", process.no_data_reason);
  if (process.malloc_unseen) j.member("malloc_unseen", true);
  j.end_object();
}

ordered_json stack_to_json(const std::vector<Frame>& stack) {
  std::string text;
  JsonText j(text, -1);
  write_stack(j, stack);
  return parsed(text);
}

ordered_json process_to_json(const ProcessReport& process, const JsonOptions& options,
                             SuggestionCache* suggestion_cache) {
  SuggestionCache own_cache;
  std::string text;
  JsonText j(text, -1);
  write_process_json(j, process, options,
                     suggestion_cache != nullptr ? *suggestion_cache : own_cache);
  return parsed(text);
}

ordered_json to_json(const Report& report, const std::string& version, const JsonOptions& options) {
  std::string text;
  append_report_json(report, text, version, options, -1);
  return parsed(text);
}

namespace {

// The report, process by process; `flush` is called after each (the text of one process at a
// time need be in memory).
template <typename Flush>
void write_report(JsonText& j, const Report& report, const std::string& version,
                  const JsonOptions& options, Flush&& flush) {
  SuggestionCache suggestions;
  j.begin_object();
  j.key("memtrack").begin_object();
  j.member("version", version);
  j.member("schema", kJsonSchemaVersion);
  j.end_object();
  j.key("processes").begin_array();
  for (const ProcessReport& process : report.processes) {
    write_process_json(j, process, options, suggestions);
    flush();
  }
  j.end_array();
  if (!report.checks.empty()) {
    j.key("checks").begin_array();
    for (const ProcessReport& check : report.checks) {
      write_process_json(j, check, options, suggestions);
      flush();
    }
    j.end_array();
  }
  j.end_object();
  flush();
}

}  // namespace

void write_report_json(const Report& report, std::ostream& out, const std::string& version,
                       const JsonOptions& options, int indent) {
  std::string text;
  JsonText j(text, indent);
  write_report(j, report, version, options, [&] {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    text.clear();
  });
}

void write_report_json(const Report& report, const std::function<void(std::string_view)>& sink,
                       const std::string& version, const JsonOptions& options, int indent) {
  std::string text;
  JsonText j(text, indent);
  write_report(j, report, version, options, [&] {
    sink(text);
    text.clear();
  });
}

void append_report_json(const Report& report, std::string& out, const std::string& version,
                        const JsonOptions& options, int indent) {
  JsonText j(out, indent);
  write_report(j, report, version, options, [] {});
}

void render_json(const Report& report, std::ostream& out, const std::string& version,
                 const JsonOptions& options) {
  write_report_json(report, out, version, options, 2);
  out << '\n';
}

}  // namespace memtrack::report
