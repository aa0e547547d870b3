// The dominator tree of the heap graph (Cooper, Harvey and Kennedy's iterative algorithm over
// a reverse postorder), with the out-edges read again from the blocks on every pass instead of
// being stored: the scan's threads are still stopped, the marking phase reads all of it in
// 20 ms for a million blocks, and the passes are few, while an edge list would cost 4-8 bytes
// per pointer on top of the per-block arrays. Runtime-safe: no malloc.
#include "runtime/leakcheck/retention.h"

#include <utility>

namespace memtrack::rt {
namespace {

// A dominator computation that has not settled after this many passes is stopped: the tree is
// then an over-approximation (some blocks' dominators too deep), and says so.
constexpr uint32_t kMaxPasses = 64;

// The work list of the depth-first search: node ids with this bit mark a node's exit.
constexpr uint32_t kExitBit = uint32_t{1} << 31;

// A group's key, for the hash table that sums them: its site and how it is held.
bool same_key(const RetentionGroup& a, const RetentionGroup& b) {
  return a.stack_id == b.stack_id && a.holder_kind == b.holder_kind && a.holder == b.holder &&
         a.root == b.root && a.parent == b.parent;
}

uint64_t hash_of(const RetentionGroup& k) {
  uint64_t h = k.stack_id * 0x9e3779b97f4a7c15ULL;
  h ^= (uint64_t{k.holder} << 2 | static_cast<uint64_t>(k.holder_kind)) * 0xc2b2ae3d27d4eb4fULL;
  h ^= (uint64_t{k.root} << 32 | k.parent) * 0x165667b19e3779f9ULL;
  return h ^ (h >> 29);
}

}  // namespace

bool RetentionGraph::member(const ScanBlocks& blocks, const ReachabilityScan& scan,
                            size_t index) const {
  return blocks.state(index) == BlockState::kReachable && !scan.runtime_held(index);
}

namespace {

// Where in a stack's source a root word lies: a frame's number, kTlsPart (the thread's static
// TLS and descriptor), or kWholeStack (its frames are not known there).
constexpr uintptr_t kTlsPart = UINTPTR_MAX - 1;
constexpr uintptr_t kWholeStack = UINTPTR_MAX;
constexpr uintptr_t kDescriptorReach = 4096;
constexpr uintptr_t kStaticTlsReach = 65536;
uintptr_t stack_part(const RootSource& source, const FrameSpan* frames, uintptr_t address) {
  if (frames == nullptr || source.frame_count == 0) return kWholeStack;
  const FrameSpan* own = frames + source.first_frame;
  for (uint32_t f = 0; f < source.frame_count; ++f) {
    if (address < own[f].cfa) return f;
  }
  // x86-64 and aarch64 glibc put a thread's static TLS and its descriptor at the top of its
  // stack mapping, above the outermost frame, around the thread pointer.
  if (source.frames_complete && source.thread_pointer != 0 &&
      address < source.thread_pointer + kDescriptorReach) {
    return kTlsPart;
  }
  return kWholeStack;
}

// Whether a root word of a data source lies in the static TLS or descriptor of the thread
// whose thread pointer the source holds (the main thread's, which the dynamic linker places
// in memory of its own). The static TLS size is not known here: the initial modules' TLS
// blocks lie within kStaticTlsReach below the thread pointer (x86-64; above it on ARM, where
// the descriptor lies below).
bool in_thread_tls(const RootSource& source, uintptr_t address) {
  const uintptr_t tp = source.thread_pointer;
  if (tp == 0 || address < source.start || address >= source.end) return false;
#if defined(__x86_64__)
  return address + kStaticTlsReach >= tp && address < tp + kDescriptorReach;
#else
  return address + kDescriptorReach >= tp && address < tp + kStaticTlsReach;
#endif
}

}  // namespace

// Retainers: the root edges grouped by what they lie in (a variable of a module, a stack's
// frame, else their source), in the order of their keys.
bool RetentionGraph::try_collect_retainers(const ReachabilityScan& scan, const RootSource* sources,
                                           size_t source_count, DataNamer namer,
                                           const FrameSpan* frames) {
  struct Keyed {
    uint64_t group;   // the source, or kSymbolGroup for a variable
    uintptr_t start;  // the variable's start within kSymbolGroup; a stack's part (stack_part)
    uint32_t edge;
  };
  constexpr uint64_t kSymbolGroup = UINT64_MAX;
  const core::MmapArray<ReachabilityScan::RootEdge>& edges = scan.root_edges();
  core::MmapArray<Keyed> keyed;
  if (!keyed.try_reserve(edges.size() + 1)) return false;
  for (size_t e = 0; e < edges.size(); ++e) {
    const ReachabilityScan::RootEdge& edge = edges[e];
    Keyed k{edge.source, 0, static_cast<uint32_t>(e)};
    if (edge.source < source_count && sources[edge.source].kind == RootKind::kData &&
        in_thread_tls(sources[edge.source], edge.address)) {
      k.start = kTlsPart;
    } else if (edge.source < source_count && sources[edge.source].kind == RootKind::kData &&
               namer != nullptr) {
      DataSymbolInfo symbol = namer(edge.address);
      if (symbol.name != nullptr) k = Keyed{kSymbolGroup, symbol.start, static_cast<uint32_t>(e)};
    } else if (edge.source < source_count && sources[edge.source].kind == RootKind::kStack) {
      k.start = stack_part(sources[edge.source], frames, edge.address);
    }
    (void)keyed.try_push_back(k);
  }
  core::heap_sort(keyed.data(), keyed.size(), [](const Keyed& a, const Keyed& b) {
    if (a.group != b.group) return a.group < b.group;
    if (a.start != b.start) return a.start < b.start;
    return a.edge < b.edge;
  });
  if (!retainer_targets_.try_reserve(keyed.size() + 1) ||
      !retainer_words_.try_reserve(keyed.size() + 1)) {
    return false;
  }
  for (size_t i = 0; i < keyed.size(); ++i) {
    const ReachabilityScan::RootEdge& edge = edges[keyed[i].edge];
    bool first =
        i == 0 || keyed[i].group != keyed[i - 1].group || keyed[i].start != keyed[i - 1].start;
    if (first) {
      Retainer r;
      r.source = edge.source;
      if (edge.source < source_count) {
        const RootSource& source = sources[edge.source];
        r.kind = source.kind;
        r.tid = source.tid;
        r.start = source.start;
        r.size = source.end - source.start;
      }
      if ((r.kind == RootKind::kStack || r.kind == RootKind::kData) &&
          keyed[i].group != kSymbolGroup && keyed[i].start == kTlsPart) {
        r.kind = RootKind::kTls;
      } else if (r.kind == RootKind::kStack && keyed[i].start != kWholeStack) {
        const RootSource& source = sources[edge.source];
        r.frame = static_cast<uint32_t>(keyed[i].start);
        r.pc = frames[source.first_frame + r.frame].pc;
      }
      if (r.kind == RootKind::kData && namer != nullptr) {
        DataSymbolInfo symbol = namer(keyed[i].group == kSymbolGroup ? keyed[i].start : r.start);
        r.module = symbol.module;
        r.module_offset = symbol.module_offset;
        if (keyed[i].group == kSymbolGroup) {
          r.symbol = symbol.name;
          r.start = symbol.start;
          r.size = symbol.size;
        }
      }
      if (!retainers_.try_push_back(r) ||
          !retainer_first_.try_push_back(static_cast<uint32_t>(retainer_targets_.size()))) {
        return false;
      }
    }
    (void)retainer_targets_.try_push_back(edge.block);
    (void)retainer_words_.try_push_back(edge.address);
  }
  return retainer_first_.try_push_back(static_cast<uint32_t>(retainer_targets_.size()));
}

template <typename F>
void RetentionGraph::for_each_successor(const ScanBlocks& blocks, const ReachabilityScan& scan,
                                        uint32_t node, F&& f) const {
  if (node == root_node_) {
    for (size_t r = 0; r < retainers_.size(); ++r) f(static_cast<uint32_t>(block_count_ + r));
    return;
  }
  if (node >= block_count_) {
    const size_t r = node - block_count_;
    for (uint32_t t = retainer_first_[r]; t < retainer_first_[r + 1]; ++t) {
      if (member(blocks, scan, retainer_targets_[t])) f(retainer_targets_[t]);
    }
    return;
  }
  scan.for_each_reference(node, [&](size_t target) {
    if (member(blocks, scan, target)) f(static_cast<uint32_t>(target));
  });
}

// Postorder numbers by an iterative depth-first search from the virtual root. A node is
// entered when it is popped for the first time; its exit marker lies under the successors it
// pushed, so it is numbered after all of them: a depth-first postorder, with the work list
// bounded by the edges instead of needing a resume point per node on the path.
bool RetentionGraph::try_order(const ScanBlocks& blocks, const ReachabilityScan& scan) {
  const size_t nodes = block_count_ + retainers_.size() + 1;
  if (!number_.try_resize(nodes) || !order_.try_reserve(nodes)) return false;
  for (size_t i = 0; i < nodes; ++i) number_[i] = kUnset;
  constexpr uint32_t kEntered = kUnset - 1;
  core::MmapArray<uint32_t> work;
  if (!work.try_push_back(root_node_)) return false;
  bool ok = true;
  while (work.size() > 0) {
    const uint32_t top = work[work.size() - 1];
    work.pop_back();
    if ((top & kExitBit) != 0) {
      const uint32_t node = top & ~kExitBit;
      number_[node] = static_cast<uint32_t>(order_.size());
      (void)order_.try_push_back(node);
      continue;
    }
    if (number_[top] != kUnset) continue;
    number_[top] = kEntered;
    ok = ok && work.try_push_back(top | kExitBit);
    for_each_successor(blocks, scan, top, [&](uint32_t next) {
      if (number_[next] == kUnset) ok = ok && work.try_push_back(next);
    });
    if (!ok) return false;
  }
  return true;
}

// The nearest common dominator of two nodes by postorder number (the root's is the highest).
uint32_t RetentionGraph::intersect(uint32_t a, uint32_t b) const {
  while (a != b) {
    while (a < b) a = idom_[a];
    while (b < a) b = idom_[b];
  }
  return a;
}

// The iteration pushes along the out-edges (which is what can be read again from the blocks)
// instead of pulling over the in-edges: visiting a node in reverse postorder, each successor's
// dominator becomes the common dominator of its current one and this node. The sets this
// represents only shrink, start above the true dominators and, when a pass changes nothing,
// meet the same equations as the pulling form, so they are the dominators.
void RetentionGraph::compute_dominators(const ScanBlocks& blocks, const ReachabilityScan& scan) {
  const uint32_t count = static_cast<uint32_t>(order_.size());
  const uint32_t root = count - 1;  // the virtual root finishes last
  for (uint32_t p = 0; p < count; ++p) idom_[p] = kUnset;
  idom_[root] = root;
  bool changed = true;
  for (passes_ = 0; changed && passes_ < kMaxPasses; ++passes_) {
    changed = false;
    for (uint32_t p = count; p-- > 0;) {
      if (idom_[p] == kUnset) continue;
      for_each_successor(blocks, scan, order_[p], [&](uint32_t next) {
        const uint32_t q = number_[next];
        if (q == root) return;
        const uint32_t dominator = idom_[q] == kUnset ? p : intersect(p, idom_[q]);
        if (dominator != idom_[q]) {
          idom_[q] = dominator;
          changed = true;
        }
      });
    }
  }
  if (changed) complete_ = false;
}

// Children finish before their dominators, so one pass in postorder sums every subtree.
void RetentionGraph::compute_retained(const ScanBlocks& blocks) {
  const uint32_t count = static_cast<uint32_t>(order_.size());
  for (uint32_t p = 0; p < count; ++p) {
    const uint32_t node = order_[p];
    const bool is_block = node < block_count_;
    retained_bytes_[p] = is_block ? blocks.size_of(node) : 0;
    retained_blocks_[p] = is_block ? 1 : 0;
  }
  for (uint32_t p = 0; p + 1 < count; ++p) {
    retained_bytes_[idom_[p]] += retained_bytes_[p];
    retained_blocks_[idom_[p]] += retained_blocks_[p];
  }
  for (uint32_t p = 0; p + 1 < count; ++p) {
    const uint32_t node = order_[p];
    if (node >= block_count_) {
      Retainer& r = retainers_[node - block_count_];
      r.retained_bytes = retained_bytes_[p];
      r.retained_blocks = retained_blocks_[p];
    } else if (idom_[p] == count - 1) {
      shared_bytes_ += retained_bytes_[p];
      shared_blocks_ += retained_blocks_[p];
    }
  }
}

uint32_t RetentionGraph::try_add_to_group(const RetentionGroup& key, uint64_t bytes,
                                          uint64_t retained_bytes, uint64_t retained_blocks) {
  if (group_mask_ == 0) {
    group_mask_ = 1023;
    if (!group_slots_.try_resize(group_mask_ + 1)) return kNoGroup;
    for (uint32_t& slot : group_slots_) slot = 0;
  }
  size_t at = hash_of(key) & group_mask_;
  while (group_slots_[at] != 0 && !same_key(groups_[group_slots_[at] - 1], key)) {
    at = (at + 1) & group_mask_;
  }
  if (group_slots_[at] == 0) {
    RetentionGroup g = key;
    g.bytes = g.blocks = g.retained_bytes = g.retained_blocks = 0;
    if (!groups_.try_push_back(g)) return kNoGroup;
    group_slots_[at] = static_cast<uint32_t>(groups_.size());
  }
  const uint32_t index = group_slots_[at] - 1;
  RetentionGroup& g = groups_[index];
  g.bytes += bytes;
  g.blocks += 1;
  g.retained_bytes += retained_bytes;
  g.retained_blocks += retained_blocks;
  if (groups_.size() * 2 <= group_mask_) return index;
  // Grow: twice the slots, every group placed again.
  group_mask_ = group_mask_ * 2 + 1;
  if (!group_slots_.try_resize(group_mask_ + 1)) return kNoGroup;
  for (uint32_t& slot : group_slots_) slot = 0;
  for (size_t i = 0; i < groups_.size(); ++i) {
    size_t s = hash_of(groups_[i]) & group_mask_;
    while (group_slots_[s] != 0) s = (s + 1) & group_mask_;
    group_slots_[s] = static_cast<uint32_t>(i + 1);
  }
  return index;
}

// Reachable blocks the search did not reach: held only through the C runtime's roots (a
// putenv string), or through a root edge that could not be kept.
bool RetentionGraph::try_group_unreached(const ScanBlocks& blocks, const ReachabilityScan& scan) {
  for (size_t i = 0; i < block_count_; ++i) {
    if (number_[i] != kUnset || !member(blocks, scan, i)) continue;
    RetentionGroup key;
    key.stack_id = blocks.stack_id(i);
    key.holder_kind = HolderKind::kRuntime;
    key.root = kNoRetainer;
    const uint64_t size = blocks.size_of(i);
    if (try_add_to_group(key, size, size, 1) == kNoGroup) return false;
  }
  return true;
}

// Each reachable block's group, top-down (reverse postorder: a dominator before the nodes it
// dominates): the group of its dominator if that is a block of the same site, else the group
// of its site under its dominator's group (or retainer). A block's retained_blocks_ entry is
// read once, here, so its group takes its place.
bool RetentionGraph::try_group(const ScanBlocks& blocks) {
  const uint32_t count = static_cast<uint32_t>(order_.size());
  const uint32_t root = count - 1;
  group_ = std::move(retained_blocks_);
  for (uint32_t p = count - 1; p-- > 0;) {
    const uint32_t node = order_[p];
    if (node >= block_count_) {
      group_[p] = kNoGroup;  // a retainer: its blocks' key says so
      continue;
    }
    const uint32_t d = idom_[p];
    const uint32_t dominator = order_[d];
    const uint32_t site = blocks.stack_id(node);
    const uint64_t retained_blocks = group_[p];
    if (d != root && dominator < block_count_ && blocks.stack_id(dominator) == site) {
      const uint32_t g = group_[d];
      group_[p] = g;
      groups_[g].bytes += blocks.size_of(node);
      groups_[g].blocks += 1;
      continue;
    }
    RetentionGroup key;
    key.stack_id = site;
    if (d == root) {
      key.holder_kind = HolderKind::kSeveral;
      key.root = kNoRetainer;
    } else if (dominator >= block_count_) {
      key.holder_kind = HolderKind::kRetainer;
      key.holder = key.root = dominator - static_cast<uint32_t>(block_count_);
    } else {
      const RetentionGroup& parent = groups_[group_[d]];
      key.holder_kind = HolderKind::kSite;
      key.holder = parent.stack_id;
      key.root = parent.root;
      key.parent = group_[d];
    }
    group_[p] = try_add_to_group(key, blocks.size_of(node), retained_bytes_[p], retained_blocks);
    if (group_[p] == kNoGroup) return false;
  }
  return true;
}

bool RetentionGraph::try_build(const ScanBlocks& blocks, const ReachabilityScan& scan,
                               const RootSource* sources, size_t source_count, DataNamer namer,
                               const FrameSpan* frames, BlockDescription* describe) {
  bool described = false;
  built_ =
      try_build_graph(blocks, scan, sources, source_count, namer, frames, describe, &described);
  // Without the graph, the block is still named: its size, site and verdict.
  if (describe != nullptr && !described) describe_block(blocks, scan, describe);
  return built_;
}

bool RetentionGraph::try_build_graph(const ScanBlocks& blocks, const ReachabilityScan& scan,
                                     const RootSource* sources, size_t source_count,
                                     DataNamer namer, const FrameSpan* frames,
                                     BlockDescription* describe, bool* described) {
  block_count_ = blocks.size();
  if (block_count_ + 1 >= kExitBit) return false;
  complete_ = scan.root_edges_complete();
  if (!try_collect_retainers(scan, sources, source_count, namer, frames)) return false;
  if (block_count_ + retainers_.size() + 1 >= kExitBit) return false;
  root_node_ = static_cast<uint32_t>(block_count_ + retainers_.size());
  if (!try_order(blocks, scan) || !try_group_unreached(blocks, scan)) return false;
  const size_t count = order_.size();
  if (!idom_.try_resize(count)) return false;
  compute_dominators(blocks, scan);
  // The postorder numbers by node are not needed any more: their memory counts blocks.
  retained_blocks_ = std::move(number_);
  if (!retained_bytes_.try_resize(count)) return false;
  compute_retained(blocks);
  if (describe != nullptr) {
    built_ = true;
    describe_block(blocks, scan, describe);
    *described = true;
  }
  const bool grouped = try_group(blocks);
  group_slots_ = core::MmapArray<uint32_t>();
  group_mask_ = 0;
  return grouped;
}

void RetentionGraph::clear() {
  retainers_.clear();
  retainer_first_.clear();
  groups_.clear();
  group_slots_ = core::MmapArray<uint32_t>();  // its slots name the groups just dropped
  group_mask_ = 0;
  built_ = false;
}

// Reads the graph while built_ (after compute_retained, before try_group takes the retained
// block counts' memory); else names the block only.
void RetentionGraph::describe_block(const ScanBlocks& blocks, const ReachabilityScan& scan,
                                    BlockDescription* out) const {
  using core::result::LinkKind;
  const long found = blocks.find(out->address);
  out->found = found >= 0;
  if (found < 0) return;
  const size_t index = static_cast<size_t>(found);
  out->state = blocks.state(index);
  out->start = blocks.start(index);
  out->size = blocks.size_of(index);
  out->stack_id = blocks.stack_id(index);
  // A block outside the graph (not reachable) keeps nothing and has no chain; it may still
  // have referrers.
  const uint32_t p = built_ ? postorder_of(index) : kUnset;
  if (p != kUnset) {
    out->retained_bytes = retained_bytes_[p];
    out->retained_blocks = retained_blocks_[p];
  }
  auto block_link = [&](size_t b) {
    BlockLink link;
    link.stack_id = blocks.stack_id(b);
    link.start = blocks.start(b);
    link.size = blocks.size_of(b);
    return link;
  };
  // The chain: the dominators up to the root; a long one keeps its nearest links and its top.
  if (p != kUnset) {
    const uint32_t root = static_cast<uint32_t>(order_.size() - 1);
    for (uint32_t d = idom_[p];; d = idom_[d]) {
      const uint32_t node = order_[d];
      BlockLink link;
      if (d == root) {
        link.kind = LinkKind::kSeveral;
      } else if (node >= block_count_) {
        link.kind = LinkKind::kRetainer;
        link.retainer = node - static_cast<uint32_t>(block_count_);
      } else {
        link = block_link(node);
      }
      const bool top = link.kind != LinkKind::kBlock;
      if (out->chain_count < core::result::kMaxBlockLinks - 1 || top) {
        out->chain[out->chain_count++] = link;
      }
      if (top) break;
    }
  }
  // The referrers: the roots, then the blocks that point at it (lost ones too: what points
  // at a lost block is lost as well, and shows where the chain was cut), but not the C
  // runtime's own.
  for (size_t r = 0; r + 1 < retainer_first_.size(); ++r) {
    for (uint32_t t = retainer_first_[r]; t < retainer_first_[r + 1]; ++t) {
      if (retainer_targets_[t] != index || out->referrer_count == core::result::kMaxBlockLinks) {
        continue;
      }
      BlockLink link;
      link.kind = LinkKind::kRetainer;
      link.retainer = static_cast<uint32_t>(r);
      link.offset = retainer_words_[t];
      out->referrers[out->referrer_count++] = link;
    }
  }
  for (size_t b = 0; b < block_count_ && out->referrer_count < core::result::kMaxBlockLinks; ++b) {
    if (scan.runtime_held(b)) continue;
    scan.for_each_reference_at(b, [&](uintptr_t at, size_t target) {
      if (target != index || out->referrer_count == core::result::kMaxBlockLinks) return;
      BlockLink link = block_link(b);
      link.offset = at - blocks.start(b);
      out->referrers[out->referrer_count++] = link;
    });
  }
}

uint32_t RetentionGraph::postorder_of(size_t index) const {
  if (index >= block_count_) return kUnset;
  for (uint32_t p = 0; p < order_.size(); ++p) {
    if (order_[p] == index) return p;
  }
  return kUnset;
}

long RetentionGraph::dominator_block(size_t index) const {
  const uint32_t p = postorder_of(index);
  if (p == kUnset) return -1;
  const uint32_t node = order_[idom_[p]];
  return node < block_count_ ? static_cast<long>(node) : -1;
}

uint32_t RetentionGraph::dominating_retainer(size_t index) const {
  const uint32_t p = postorder_of(index);
  if (p == kUnset) return kNoRetainer;
  const uint32_t node = order_[idom_[p]];
  return node >= block_count_ && node != root_node_ ? node - static_cast<uint32_t>(block_count_)
                                                    : kNoRetainer;
}

uint64_t RetentionGraph::retained_bytes(size_t index) const {
  const uint32_t p = postorder_of(index);
  return p == kUnset ? 0 : retained_bytes_[p];
}

uint64_t RetentionGraph::retained_blocks(size_t index) const {
  const uint32_t p = postorder_of(index);
  if (p == kUnset) return 0;
  // The retained block counts made way for the groups: count the blocks whose dominator chain
  // passes through p (their postorder numbers are below it).
  uint64_t count = 1;
  const uint32_t root = static_cast<uint32_t>(order_.size() - 1);
  for (uint32_t q = 0; q < p; ++q) {
    uint32_t up = q;
    while (up < p && up != root) up = idom_[up];
    if (up == p && order_[q] < block_count_) ++count;
  }
  return count;
}

uint32_t RetentionGraph::group_of(size_t index) const {
  const uint32_t p = postorder_of(index);
  return p == kUnset || p >= group_.size() ? kNoGroup : group_[p];
}

size_t RetentionGraph::bytes_used() const {
  // order_, idom_ and retained_bytes_ per reached node; group_ (once number_) per node.
  return order_.size() * (sizeof(uint32_t) * 2 + sizeof(uint64_t)) +
         group_.size() * sizeof(uint32_t) + retainer_targets_.size() * sizeof(uint32_t) +
         retainer_words_.size() * sizeof(uintptr_t) + retainers_.size() * sizeof(Retainer) +
         groups_.size() * sizeof(RetentionGroup);
}

}  // namespace memtrack::rt
