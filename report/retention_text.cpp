// Retention report text (retention_text.h).
#include "report/retention_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/result_names.h"
#include "report/text_format.h"

namespace memtrack::report {
namespace {

using core::result::HolderKind;
using core::result::RootKind;

std::string thread_phrase(uint32_t tid, uint32_t pid) {
  return tid == pid ? "main thread" : fmt::format("thread {}", tid);
}

std::string amount(uint64_t bytes, uint64_t blocks) {
  return fmt::format("{} in {}", count_of(bytes, "byte", "bytes"),
                     count_of(blocks, "block", "blocks"));
}

}  // namespace

std::string_view short_function_name(std::string_view function) {
  // Cut the parameters (the last top-level '(') and the return type, then the scopes.
  int depth = 0;
  size_t end = function.size();
  for (size_t i = function.size(); i-- > 0;) {
    char c = function[i];
    if (c == ')' || c == '>') ++depth;
    if (c == '(' || c == '<') --depth;
    if (c == '(' && depth == 0) {
      end = i;
      break;
    }
  }
  std::string_view name = function.substr(0, end);
  if (name.ends_with('>')) {  // a function template's arguments
    depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      if (name[i] == '>') ++depth;
      if (name[i] == '<' && --depth == 0) {
        name = name.substr(0, i);
        break;
      }
    }
  }
  depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    char c = name[i];
    if (c == '>' || c == ')') ++depth;
    if (c == '<' || c == '(') --depth;
    if (depth == 0 && (c == ':' || c == ' ')) return name.substr(i + 1);
  }
  return name;
}

std::string retainer_name(const Retainer& r, uint32_t pid) {
  switch (r.kind) {
    case RootKind::kData:
      if (!r.symbol.empty()) {
        if (!r.declared.file.empty() && r.declared.line > 0) {
          return fmt::format("global {} ({}:{})", r.symbol, path_basename(r.declared.file),
                             r.declared.line);
        }
        return r.module.empty() ? fmt::format("global {}", r.symbol)
                                : fmt::format("global {} ({})", r.symbol, path_basename(r.module));
      }
      if (!r.module.empty()) {
        return fmt::format("data of {}+{}", path_basename(r.module), hex(r.module_offset));
      }
      return fmt::format("anonymous mapping {}-{}", hex(r.address), hex(r.address + r.size));
    case RootKind::kStack:
      if (r.frame != core::result::kNoFrame && !r.function.empty()) {
        // The outermost of the inlined calls is the frame's own function.
        return fmt::format("{} stack, frame #{} {}", thread_phrase(r.tid, pid), r.frame,
                           site_phrase({r.function.back()}));
      }
      return thread_phrase(r.tid, pid) + " stack";
    case RootKind::kTls:
      return thread_phrase(r.tid, pid) + " TLS";
    case RootKind::kRegisters:
      return thread_phrase(r.tid, pid) + " registers";
    case RootKind::kRegion:
      return fmt::format("registered root region {}-{}", hex(r.address), hex(r.address + r.size));
    case RootKind::kIgnored:
      return "blocks the program asked to ignore";
    case RootKind::kStream:
      return "open FILE streams";
    case RootKind::kOldHeap:
      return "heap memory from before the attach";
  }
  return "unknown root";
}

std::string site_phrase(const std::vector<Frame>& stack) {
  if (stack.empty()) return "an unknown site";
  size_t chosen = 0;
  for (size_t i = 0; i < stack.size(); ++i) {
    const Frame& f = stack[i];
    if (is_system_runtime_module(f.module) || f.file.starts_with("/usr/include/")) continue;
    chosen = i;
    break;
  }
  const Frame& f = stack[chosen];
  std::string function = f.function.empty() ? "??" : f.function;
  std::string where;
  if (!f.file.empty() && f.line > 0) {
    where = fmt::format("{} ({}:{})", function, path_basename(f.file), f.line);
  } else if (!f.module.empty()) {
    where = fmt::format("{} ({}+{})", function, path_basename(f.module), hex(f.module_offset));
  } else {
    where = fmt::format("{} ({})", function, hex(f.address));
  }
  // The frames skipped tell a container's nodes from its bucket array: name the innermost
  // that is more than the allocator itself.
  for (size_t i = 0; i < chosen; ++i) {
    std::string_view name = short_function_name(stack[i].function);
    if (name.empty() || name == "allocate" || name.starts_with("operator new")) continue;
    return fmt::format("{} via {}", where, name);
  }
  return where;
}

std::string holder_chain(const Retention& retention, const RetentionGroup& group, uint32_t pid) {
  std::vector<std::string> parts;
  const RetentionGroup* at = &group;
  // Parents come before their children in the file, so the chain ends; the count bounds it.
  for (size_t hops = 0; at->holder_kind == HolderKind::kSite && hops <= retention.groups.size();
       ++hops) {
    auto site = retention.sites.find(at->holder);
    std::string where = site != retention.sites.end() ? site_phrase(site->second) : "?";
    if (at->parent >= retention.groups.size()) {  // the holder is the C/C++ runtime's own
      parts.push_back(fmt::format("blocks allocated at {}", where));
      break;
    }
    const RetentionGroup& holder = retention.groups[at->parent];
    parts.push_back(fmt::format("{} allocated at {}", amount(holder.bytes, holder.blocks), where));
    at = &holder;
  }
  std::string top;
  if (at->holder_kind == HolderKind::kSite) {
    top = group.root != core::result::kNoRetainer && group.root < retention.retainers.size()
              ? retainer_name(retention.retainers[group.root], pid)
              : "several roots";
  } else if (at->holder_kind == HolderKind::kRetainer && at->holder < retention.retainers.size()) {
    top = retainer_name(retention.retainers[at->holder], pid);
  } else if (at->holder_kind == HolderKind::kSeveral) {
    top = "several roots, none alone";
  } else {
    top = "the C runtime's roots only";
  }
  std::string chain = top;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) chain += " -> " + *it;
  return chain;
}

std::vector<std::string> retention_lines(const Retention& retention, uint32_t pid, size_t max_roots,
                                         size_t max_sites) {
  std::vector<std::string> lines;
  if (retention.groups.empty()) return lines;
  lines.push_back(
      fmt::format("RETAINED MEMORY: what keeps the still-reachable blocks alive{}",
                  retention.approximate ? " (approximate: some holders may be too deep)" : ""));
  std::vector<const Retainer*> roots;
  for (const Retainer& r : retention.retainers) {
    if (r.retained_blocks > 0) roots.push_back(&r);
  }
  std::stable_sort(roots.begin(), roots.end(), [](const Retainer* a, const Retainer* b) {
    return a->retained_bytes > b->retained_bytes;
  });
  lines.push_back("roots by what they alone keep alive:");
  for (size_t i = 0; i < roots.size() && i < max_roots; ++i) {
    lines.push_back(fmt::format("  {}: {}",
                                amount(roots[i]->retained_bytes, roots[i]->retained_blocks),
                                retainer_name(*roots[i], pid)));
  }
  if (roots.size() > max_roots) {
    lines.push_back(
        fmt::format("  and {}", count_of(roots.size() - max_roots, "more root", "more roots")));
  }
  if (retention.shared_blocks > 0) {
    lines.push_back(fmt::format("  {}: reachable from several roots, kept by none alone",
                                amount(retention.shared_bytes, retention.shared_blocks)));
  }
  lines.push_back("still-reachable sites and what holds them:");
  // A site may be held several ways; its groups are listed under it, most bytes first.
  std::vector<uint32_t> sites;
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> totals;  // bytes, blocks
  for (const RetentionGroup& g : retention.groups) {
    auto [it, added] = totals.try_emplace(g.stack_id, 0, 0);
    if (added) sites.push_back(g.stack_id);
    it->second.first += g.bytes;
    it->second.second += g.blocks;
  }
  std::stable_sort(sites.begin(), sites.end(),
                   [&](uint32_t a, uint32_t b) { return totals[a].first > totals[b].first; });
  for (size_t i = 0; i < sites.size() && i < max_sites; ++i) {
    const uint32_t site = sites[i];
    auto frames = retention.sites.find(site);
    lines.push_back(
        fmt::format("  {} allocated at {}", amount(totals[site].first, totals[site].second),
                    frames != retention.sites.end() ? site_phrase(frames->second) : "?"));
    size_t shown = 0;
    size_t more = 0;
    for (const RetentionGroup& g : retention.groups) {
      if (g.stack_id != site) continue;
      if (shown == 3) {
        ++more;
        continue;
      }
      ++shown;
      lines.push_back(fmt::format("    {} held by {}", amount(g.bytes, g.blocks),
                                  holder_chain(retention, g, pid)));
    }
    if (more > 0) {
      lines.push_back(fmt::format("    and held {} more ways", more));
    }
  }
  if (sites.size() > max_sites) {
    lines.push_back(
        fmt::format("  and {}", count_of(sites.size() - max_sites, "more site", "more sites")));
  }
  return lines;
}

namespace {

std::string block_phrase(uint64_t start, uint64_t size, const std::vector<Frame>& stack) {
  return fmt::format("{} ({}) allocated at {}", hex(start), count_of(size, "byte", "bytes"),
                     site_phrase(stack));
}

}  // namespace

std::vector<std::string> block_retention_lines(const BlockRetention& block) {
  std::vector<std::string> lines;
  if (!block.found) {
    lines.push_back(fmt::format("BLOCK {}: no live block holds this address", hex(block.address)));
    return lines;
  }
  // "BLOCK 0x10: 48 bytes allocated at ..." or, inside a block, "BLOCK 0x18: 8 bytes into
  // 0x10 (48 bytes) allocated at ...".
  const std::string what =
      block.address != block.start
          ? fmt::format("{} bytes into {}", block.address - block.start,
                        block_phrase(block.start, block.size, block.stack))
          : fmt::format("{} allocated at {}", count_of(block.size, "byte", "bytes"),
                        site_phrase(block.stack));
  lines.push_back(fmt::format("BLOCK {}: {}, {}", hex(block.address), what,
                              core::leak_kind_phrase(block.kind)));
  if (block.kind == LeakKind::kReachable) {
    lines.push_back(fmt::format("  keeps alive {} (itself included)",
                                amount(block.retained_bytes, block.retained_blocks)));
  }
  if (!block.chain.empty()) {
    lines.push_back("  held by (nearest first):");
    for (const BlockLink& link : block.chain) {
      lines.push_back(link.kind == core::result::LinkKind::kBlock
                          ? "    " + block_phrase(link.start, link.size, link.stack)
                          : "    " + link.root);
    }
  }
  lines.push_back(block.referrers.empty() ? "  pointed to from: nothing the scan reads"
                                          : "  pointed to from:");
  for (const BlockLink& link : block.referrers) {
    if (link.kind == core::result::LinkKind::kBlock) {
      lines.push_back(fmt::format("    offset {} of {}", link.offset,
                                  block_phrase(link.start, link.size, link.stack)));
    } else {
      lines.push_back(link.offset != 0 ? fmt::format("    {} (at {})", link.root, hex(link.offset))
                                       : "    " + link.root);
    }
  }
  return lines;
}

}  // namespace memtrack::report
