// massif's format (see massif.h). The tree of a detailed snapshot starts at the allocation
// functions and goes outwards, one level per frame, as massif's does: each node's bytes are
// the sum of its children's (or its sites' when the stack ends there).
#include "profile/massif.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/text_format.h"

namespace memtrack::profile {
namespace {

struct Node {
  uint64_t bytes = 0;
  std::map<std::string, std::unique_ptr<Node>> children;
};

std::string frame_label(const Frame& frame) {
  std::string function = frame.function.empty() ? "???" : frame.function;
  std::string where;
  if (!frame.file.empty()) {
    where = fmt::format(" ({}:{})", frame.file, frame.line);
  } else if (!frame.module.empty()) {
    where = fmt::format(" (in {})", frame.module);
  }
  return fmt::format("0x{:X}: {}{}", frame.address, function, where);
}

void write_node(const Node& node, const std::string& label, int depth, std::ostream& out) {
  std::vector<std::pair<std::string, const Node*>> children;
  for (const auto& [name, child] : node.children) children.emplace_back(name, child.get());
  std::stable_sort(children.begin(), children.end(),
                   [](const auto& x, const auto& y) { return x.second->bytes > y.second->bytes; });
  out << std::string(static_cast<size_t>(depth), ' ') << 'n' << children.size() << ": "
      << node.bytes << ' ' << label << '\n';
  for (const auto& [name, child] : children) write_node(*child, name, depth + 1, out);
}

void write_tree(const ProfileAnalysis& a, StackNames& names, Ranking ranking, std::ostream& out) {
  Node root;
  for (uint32_t id = 0; id < a.sites.size(); ++id) {
    uint64_t bytes = site_value(a.sites[id], ranking);
    if (bytes == 0 || !site_listed(a, id)) continue;
    root.bytes += bytes;
    const std::vector<Frame>& stack = names.stack(id);
    Node* node = &root;
    size_t shown = report::printed_frame_count(stack);
    for (size_t i = 0; i < shown; ++i) {
      std::unique_ptr<Node>& child = node->children[frame_label(stack[i])];
      if (!child) child = std::make_unique<Node>();
      child->bytes += bytes;
      node = child.get();
    }
  }
  write_node(root, "(heap allocation functions) malloc/new/new[], --alloc-fns, etc.", 0, out);
}

struct Snapshot {
  uint64_t time_ms;
  uint64_t heap_bytes;
  int tree;  // 0 none, 1 peak, 2 end
};

}  // namespace

void render_massif(const ProfileAnalysis& a, StackNames& names, const ProfileOutputOptions& options,
                   std::ostream& out) {
  std::vector<Snapshot> snapshots;
  snapshots.push_back({0, 0, 0});
  bool peak_written = false;
  for (const SeriesPoint& p : a.series) {
    uint64_t end_ms = (p.time_us + a.bucket_us) / 1000;
    if (!peak_written && a.peak_bytes > 0 && a.peak_time_us < p.time_us + a.bucket_us) {
      snapshots.push_back({a.peak_time_us / 1000, a.peak_bytes, 1});
      peak_written = true;
    }
    if (end_ms < a.end_time_us / 1000) snapshots.push_back({end_ms, p.heap_bytes, 0});
  }
  if (!peak_written && a.peak_bytes > 0)
    snapshots.push_back({a.peak_time_us / 1000, a.peak_bytes, 1});
  snapshots.push_back({a.end_time_us / 1000, a.live_bytes, 2});
  out << "desc: memtrack heap profile (pid " << a.meta.pid << ")";
  // ms_print shows desc: the trees' figures are then estimates; the heap sizes stay exact.
  if (a.sampled()) out << ", sampled: the trees are estimates";
  out << "\n";
  out << "cmd: " << options.program << "\n";
  out << "time_unit: ms\n";
  for (size_t i = 0; i < snapshots.size(); ++i) {
    const Snapshot& s = snapshots[i];
    out << "#-----------\nsnapshot=" << i << "\n#-----------\n";
    out << "time=" << s.time_ms << "\n";
    out << "mem_heap_B=" << s.heap_bytes << "\n";
    out << "mem_heap_extra_B=0\nmem_stacks_B=0\n";
    if (s.tree == 0) {
      out << "heap_tree=empty\n";
    } else {
      out << (s.tree == 1 ? "heap_tree=peak\n" : "heap_tree=detailed\n");
      write_tree(a, names, s.tree == 1 ? Ranking::kPeak : Ranking::kLeaked, out);
    }
  }
}

}  // namespace memtrack::profile
