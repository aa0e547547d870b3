// ResultFile -> ProcessReport (see build_report.h). No I/O, no global state.
#include "report/build_report.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "report/retention_text.h"
#include "symbolize/symbolizer.h"

namespace memtrack::report {

namespace {

std::vector<Frame> symbolize_stack(const ResultFile& file, uint32_t stack_id,
                                   const SymbolizeFn& symbolize) {
  std::vector<Frame> stack;
  auto it = file.stacks.find(stack_id);
  if (it == file.stacks.end()) return stack;
  const std::vector<uint64_t>& addresses = it->second;
  for (uint64_t address : addresses) {
    // Every recorded address is a return address, frame 0 included (the runtime's own frames
    // are dropped, so frame 0 is the return address into the allocator's caller).
    // Copy at once: the symbolizer's reference may not survive its next call.
    const std::vector<Frame>& frames = symbolize(address, true);
    stack.insert(stack.end(), frames.begin(), frames.end());
  }
  return stack;
}

ErrorReport error_report(const ResultFile& file, const RawError& raw,
                         const SymbolizeFn& symbolize) {
  ErrorReport error;
  static_cast<ErrorFacts&>(error) = raw;
  error.stack = symbolize_stack(file, raw.bad_stack, symbolize);
  // Id 0 means "not known" (even if a stack 0 happened to be in the file).
  if (raw.alloc_stack != 0) error.alloc_stack = symbolize_stack(file, raw.alloc_stack, symbolize);
  if (raw.free_stack != 0) error.free_stack = symbolize_stack(file, raw.free_stack, symbolize);
  return error;
}

uint64_t sort_address(const std::vector<Frame>& stack) {
  return stack.empty() ? std::numeric_limits<uint64_t>::max() : stack[0].address;
}

uint64_t sort_address(const LeakGroup& group) {
  return sort_address(group.stack);
}

// What each suppression entry matched, by entry number (Suppressions::match).
using UsedCounts = std::map<size_t, UsedSuppression>;

UsedSuppression& used_entry(UsedCounts& used, const Suppressions& suppressions, size_t index) {
  UsedSuppression& entry = used[index];
  if (entry.name.empty()) {
    entry.name = suppressions.entry_name(index);
    entry.origin = suppressions.entry_origin(index);
  }
  return entry;
}

// The descriptors open at exit, one site per stack that opened some, most descriptors
// first; sites matched by a suppression are only counted.
void add_resource_sites(const ResultFile& file, const SymbolizeFn& symbolize,
                        const Suppressions& suppressions, UsedCounts& used, ProcessReport& report) {
  report.tracks_resources = file.tracks_resources;
  report.summary.untracked_descriptors = file.untracked_resources;
  std::map<uint32_t, std::vector<const RawResource*>> by_stack;
  for (const RawResource& raw : file.resources) by_stack[raw.stack_id].push_back(&raw);
  for (const auto& [stack_id, raws] : by_stack) {
    ResourceSite site;
    site.stack = symbolize_stack(file, stack_id, symbolize);
    for (const RawResource* raw : raws) site.resources.push_back(*raw);
    std::stable_sort(site.resources.begin(), site.resources.end(),
                     [](const ResourceFacts& a, const ResourceFacts& b) { return a.fd < b.fd; });
    if (auto entry = suppressions.match_descriptors(site.stack)) {
      report.summary.suppressed_descriptors += site.resources.size();
      used_entry(used, suppressions, *entry).descriptors += site.resources.size();
      continue;
    }
    report.summary.open_descriptors += site.resources.size();
    report.resource_sites.push_back(std::move(site));
  }
  std::stable_sort(report.resource_sites.begin(), report.resource_sites.end(),
                   [](const ResourceSite& a, const ResourceSite& b) {
                     if (a.resources.size() != b.resources.size()) {
                       return a.resources.size() > b.resources.size();
                     }
                     return sort_address(a.stack) < sort_address(b.stack);
                   });
}

}  // namespace

// Section 14 symbolized: variables demangled, sites' stacks, the C/C++ runtime's own blocks
// (reachable groups it keeps for itself) left out of the sites.
Retention build_retention(const ResultFile& file, const SymbolizeFn& symbolize,
                          const LocateVariableFn& locate_variable) {
  const ResultFile::RawRetention& raw = *file.retention;
  Retention retention;
  retention.approximate = (raw.head.flags & core::result::kRetentionApproximate) != 0;
  retention.passes = raw.head.passes;
  retention.shared_bytes = raw.head.shared_bytes;
  retention.shared_blocks = raw.head.shared_blocks;
  for (const ResultFile::RawRetainer& r : raw.retainers) {
    Retainer out;
    out.kind = r.kind;
    out.tid = r.tid;
    out.frame = r.frame;
    // The innermost frame is where the thread was stopped; the others are return addresses.
    if (r.frame != core::result::kNoFrame) out.function = symbolize(r.pc, r.frame > 0);
    out.address = r.start;
    out.size = r.size;
    out.symbol = r.symbol.empty() ? "" : symbolize::demangle(r.symbol);
    out.module = r.module;
    out.module_offset = r.module_offset;
    if (!out.symbol.empty() && locate_variable) out.declared = locate_variable(r.start);
    out.retained_bytes = r.retained_bytes;
    out.retained_blocks = r.retained_blocks;
    retention.retainers.push_back(std::move(out));
  }
  std::set<uint32_t> runtime_sites;
  for (const RawLeak& leak : file.leaks) {
    if (leak.runtime_internal) runtime_sites.insert(leak.stack_id);
  }
  if (file.live) {
    for (const RawLiveSite& site : file.live->sites) {
      if (site.runtime_internal) runtime_sites.insert(site.stack_id);
    }
  }
  // The groups kept, most bytes first, with their parents renumbered (the file's index is
  // kept in `parent` until then).
  std::vector<uint32_t> file_index;
  for (uint32_t i = 0; i < raw.groups.size(); ++i) {
    const core::result::RetentionGroupRecord& g = raw.groups[i];
    if (runtime_sites.contains(g.stack_id)) continue;
    retention.groups.push_back({g.stack_id, g.holder_kind, g.holder, g.root, g.bytes, g.blocks,
                                g.retained_bytes, g.retained_blocks, g.parent});
    file_index.push_back(i);
    for (uint32_t id :
         {g.stack_id, g.holder_kind == core::result::HolderKind::kSite ? g.holder : g.stack_id}) {
      if (!retention.sites.contains(id)) retention.sites[id] = symbolize_stack(file, id, symbolize);
    }
  }
  std::vector<uint32_t> order(retention.groups.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const RetentionGroup& ga = retention.groups[a];
    const RetentionGroup& gb = retention.groups[b];
    if (ga.bytes != gb.bytes) return ga.bytes > gb.bytes;
    return ga.stack_id < gb.stack_id;
  });
  // By the file's index: where that group is after sorting (kNoGroup: left out).
  std::vector<uint32_t> kept_at(raw.groups.size(), core::result::kNoGroup);
  for (uint32_t i = 0; i < order.size(); ++i) kept_at[file_index[order[i]]] = i;
  std::vector<RetentionGroup> sorted;
  sorted.reserve(order.size());
  for (uint32_t i : order) {
    RetentionGroup g = retention.groups[i];
    g.parent = g.parent < kept_at.size() ? kept_at[g.parent] : core::result::kNoGroup;
    sorted.push_back(g);
  }
  retention.groups = std::move(sorted);
  return retention;
}

// By total bytes as memcheck ranks loss records: a definite group counts what hangs off it.
// In the sampled mode: by estimated bytes, and the blocks that were not sampled last.
bool leak_group_before(const LeakGroup& a, const LeakGroup& b) {
  bool a_unsampled = a.sampling == LeakGroup::Sampling::kNotSampled;
  bool b_unsampled = b.sampling == LeakGroup::Sampling::kNotSampled;
  if (a_unsampled != b_unsampled) return b_unsampled;
  // An estimate stands for the site's blocks; what hangs off its sampled blocks is not
  // estimated, and not added.
  auto total = [](const LeakGroup& g) {
    return g.sampling == LeakGroup::Sampling::kEstimated ? g.estimated_bytes
                                                         : g.bytes + g.indirect_bytes;
  };
  uint64_t a_total = total(a);
  uint64_t b_total = total(b);
  if (a_total != b_total) return a_total > b_total;
  if (a.blocks != b.blocks) return a.blocks > b.blocks;
  return sort_address(a) < sort_address(b);
}

BlockRetention build_block_retention(const ResultFile& file,
                                     const std::optional<Retention>& retention,
                                     const SymbolizeFn& symbolize) {
  const ResultFile::RawBlockRetention& raw = *file.block_retention;
  BlockRetention out;
  out.address = raw.head.address;
  out.found = raw.head.found != 0;
  if (!out.found) return out;
  out.kind = raw.head.kind;
  out.start = raw.head.start;
  out.size = raw.head.size;
  out.stack = symbolize_stack(file, raw.head.stack_id, symbolize);
  out.retained_bytes = raw.head.retained_bytes;
  out.retained_blocks = raw.head.retained_blocks;
  auto link = [&](const core::result::BlockLinkRecord& r) {
    BlockLink l;
    l.kind = r.kind;
    l.start = r.start;
    l.size = r.size;
    l.offset = r.offset;
    if (r.kind == core::result::LinkKind::kBlock) {
      l.stack = symbolize_stack(file, r.stack_id, symbolize);
    } else if (r.kind == core::result::LinkKind::kRetainer && retention &&
               r.retainer < retention->retainers.size()) {
      l.root = retainer_name(retention->retainers[r.retainer], file.pid);
    } else {
      l.root = "several roots, none alone";
    }
    return l;
  };
  for (const auto& r : raw.chain) out.chain.push_back(link(r));
  for (const auto& r : raw.referrers) out.referrers.push_back(link(r));
  return out;
}

ProcessReport build_process_report(const ResultFile& file, const SymbolizeFn& symbolize,
                                   const std::vector<std::string>& symbolizer_notes,
                                   const Suppressions& suppressions, LeakKinds stack_kinds,
                                   const LocateVariableFn& locate_variable) {
  ProcessReport report;
  report.pid = file.pid;
  report.ppid = file.ppid;
  report.command = file.command;
  report.modules = file.modules;
  report.exit = file.exit;
  report.sample_interval = file.sample_interval;
  report.sampled_allocations = file.sampled_allocations;
  for (const auto& total : file.stack_totals) {
    report.allocation_totals.push_back(
        {symbolize_stack(file, total.stack_id, symbolize), total.blocks, total.bytes});
  }
  report.allocation_totals_incomplete = file.stack_totals_incomplete;
  if (file.retention) report.retention = build_retention(file, symbolize, locate_variable);
  if (file.block_retention) {
    report.block_retention = build_block_retention(file, report.retention, symbolize);
  }

  Summary& summary = report.summary;
#define MEMTRACK_COUNTER(Enumerator, name, description) summary.name = file.stats.name;
#include "core/stats.inc"
#undef MEMTRACK_COUNTER

  if (suppressions.size() > 0) stack_kinds = LeakKinds::all();
  UsedCounts used;
  for (const RawLeak& raw : file.leaks) {
    if (raw.runtime_internal) {
      summary.runtime_internal.add(raw.bytes, raw.blocks);
      continue;
    }
    LeakGroup group;
    group.kind = raw.kind;
    group.bytes = raw.bytes;
    group.blocks = raw.blocks;
    group.indirect_bytes = raw.indirect_bytes;
    group.indirect_blocks = raw.indirect_blocks;
    if (file.sample_interval != 0) {
      group.sampling =
          raw.stack_id == 0 ? LeakGroup::Sampling::kNotSampled : LeakGroup::Sampling::kEstimated;
      group.estimated_bytes = raw.estimated_bytes;
      group.estimated_blocks = raw.estimated_blocks;
    }
    if (!stack_kinds.contains(group.kind)) {
      summary.of_kind(group.kind).add(group.bytes, group.blocks);
      report.leaks.push_back(std::move(group));
      continue;
    }
    group.stack = symbolize_stack(file, raw.stack_id, symbolize);
    if (auto entry = suppressions.match(group)) {
      UsedSuppression& use = used_entry(used, suppressions, *entry);
      use.groups += 1;
      use.bytes += group.bytes;
      use.blocks += group.blocks;
      summary.suppressed.add(group.bytes, group.blocks);
      report.suppressed.push_back(std::move(group));
    } else {
      summary.of_kind(group.kind).add(group.bytes, group.blocks);
      report.leaks.push_back(std::move(group));
    }
  }
  for (const RawError& raw : file.errors) {
    report.errors.push_back(error_report(file, raw, symbolize));
    summary.errors += 1;
    summary.error_occurrences += raw.occurrences;
  }
  add_resource_sites(file, symbolize, suppressions, used, report);
  for (auto& [index, entry] : used) report.used_suppressions.push_back(std::move(entry));
  if (file.crash) {
    CrashReport crash;
    static_cast<CrashFacts&>(crash) = *file.crash;
    crash.stack = symbolize_stack(file, file.crash->stack_id, symbolize);
    report.crash = std::move(crash);
  }
  std::stable_sort(report.leaks.begin(), report.leaks.end(), leak_group_before);
  std::stable_sort(report.suppressed.begin(), report.suppressed.end(), leak_group_before);
  // What the runtime could not see first; the symbolizer's notes ("no debug info for ...")
  // after, read last since it adds them while it works.
  for (const ResultFile::RuntimeNote& note : file.notes) {
    report.notes.push_back(note.text);
    if (note.kind == core::result::NoteKind::kMallocUnseen) report.malloc_unseen = true;
  }
  report.runtime_notes = report.notes.size();
  report.notes.insert(report.notes.end(), symbolizer_notes.begin(), symbolizer_notes.end());
  return report;
}

}  // namespace memtrack::report
