// Cutting stacks to --num-callers frames and merging the groups that become equal.
#include "report/stack_depth.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "report/build_report.h"

namespace memtrack::report {
namespace {

void cut(std::vector<Frame>& stack, size_t depth) {
  if (stack.size() > depth) stack.resize(depth);
}

// What makes two frames the same line of a report.
using FrameKey = std::tuple<uint64_t, std::string, bool>;
using GroupKey = std::pair<LeakKind, std::vector<FrameKey>>;

GroupKey key_of(const LeakGroup& group) {
  std::vector<FrameKey> frames;
  frames.reserve(group.stack.size());
  for (const Frame& f : group.stack) frames.emplace_back(f.address, f.function, f.inlined);
  return {group.kind, std::move(frames)};
}

void merge_groups(std::vector<LeakGroup>& groups, size_t depth) {
  std::map<GroupKey, size_t> index;
  std::vector<LeakGroup> merged;
  for (LeakGroup& group : groups) {
    cut(group.stack, depth);
    auto [it, inserted] = index.try_emplace(key_of(group), merged.size());
    if (inserted) {
      merged.push_back(std::move(group));
      continue;
    }
    LeakGroup& into = merged[it->second];
    into.bytes += group.bytes;
    into.blocks += group.blocks;
    into.indirect_bytes += group.indirect_bytes;
    into.indirect_blocks += group.indirect_blocks;
  }
  std::stable_sort(merged.begin(), merged.end(), leak_group_before);
  groups = std::move(merged);
}

}  // namespace

void limit_stack_depth(ProcessReport& process, size_t depth) {
  if (depth == 0) return;
  merge_groups(process.leaks, depth);
  merge_groups(process.suppressed, depth);
  for (ErrorReport& error : process.errors) {
    cut(error.stack, depth);
    cut(error.alloc_stack, depth);
    cut(error.free_stack, depth);
  }
  for (ResourceSite& site : process.resource_sites) cut(site.stack, depth);
  if (process.crash) cut(process.crash->stack, depth);
}

}  // namespace memtrack::report
