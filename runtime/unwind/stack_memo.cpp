// The memo's trees (stack_memo.h): taking an entry for a walk, evicting leaves and whole
// trees, and hanging a walk's entry where its lookup stopped. Only after a miss; a hit is the
// header's inline lookup. Runtime-safe: touches the thread's own memo only.
#include "runtime/unwind/stack_memo.h"

namespace memtrack::rt {
namespace {

// Frees the tree of `root`, whose way goes to another key: leaves first, each the first
// child of its parent.
void free_tree(StackMemo& memo, MemoIndex root) {
  MemoIndex index = root;
  for (;;) {
    while (memo.entries[index].first_child != kMemoNone) index = memo.entries[index].first_child;
    if (index == root) break;
    MemoIndex parent = memo.entries[index].parent;
    memo.entries[parent].first_child = memo.entries[index].next_sibling;
    free_memo_entry(memo, index);
    index = parent;
  }
  free_memo_entry(memo, root);
}

// Takes a leaf out of its parent's children, or a root out of its way.
void unlink_leaf(StackMemo& memo, MemoIndex index) {
  const StackMemoEntry& entry = memo.entries[index];
  if (entry.parent == kMemoNone) {
    memo.way_pc[entry.root_way] = 0;
    return;
  }
  MemoIndex* link = &memo.entries[entry.parent].first_child;
  while (*link != index) link = &memo.entries[*link].next_sibling;
  *link = entry.next_sibling;
}

size_t take_way(StackMemo& memo, size_t set) {
  for (int way = 0; way < kMemoWays; ++way) {
    if (memo.way_pc[set + static_cast<size_t>(way)] == 0) return set + static_cast<size_t>(way);
  }
  uint8_t& next = memo.next_way[set / kMemoWays];
  size_t way = set + next;
  next = static_cast<uint8_t>((next + 1) % kMemoWays);
  free_tree(memo, memo.way_root[way]);
  memo.way_pc[way] = 0;
  return way;
}

// Whether a walk's entry may hang from miss.parent at miss.diverge: it loaded the parent's
// words before that one, the same address there with another value, and no sibling branches
// there with that value. A lookup found exactly that; this holds it to the words the walk
// read, so that a stack that changed between the two cannot break the tree.
bool fits_below(const StackMemo& memo, const MemoMiss& miss, const StackMemoEntry& entry) {
  const StackMemoEntry& parent = memo.entries[miss.parent];
  const int d = miss.diverge;
  if (entry.words <= d || d >= parent.words) return false;
  for (int i = 0; i < d; ++i) {
    if (entry.address[i] != parent.address[i] || entry.value[i] != parent.value[i]) return false;
  }
  if (entry.address[d] != parent.address[d] || entry.value[d] == parent.value[d]) return false;
  for (MemoIndex child = parent.first_child; child != kMemoNone;
       child = memo.entries[child].next_sibling) {
    const StackMemoEntry& sibling = memo.entries[child];
    if (sibling.diverge == d && sibling.value[d] == entry.value[d]) return false;
  }
  return true;
}

}  // namespace

void reset_memo(StackMemo& memo, uint32_t generation) {
  for (uintptr_t& pc : memo.way_pc) pc = 0;
  memo.used = 0;
  memo.clock = 0;
  memo.free_head = kMemoNone;
  memo.generation = generation;
}

void free_memo_entry(StackMemo& memo, MemoIndex index) {
  memo.entries[index].next_sibling = memo.free_head;
  memo.free_head = index;
}

MemoIndex take_memo_entry(StackMemo& memo, const MemoMiss& miss, size_t* way) {
  if (miss.parent == kMemoNone) *way = take_way(memo, miss.set);
  if (memo.free_head != kMemoNone) {
    MemoIndex index = memo.free_head;
    memo.free_head = memo.entries[index].next_sibling;
    return index;
  }
  if (memo.used < kMemoEntries) return memo.used++;
  for (int tries = 0; tries < kMemoEntries; ++tries) {
    MemoIndex index = memo.clock;
    memo.clock = static_cast<uint16_t>((memo.clock + 1) % kMemoEntries);
    if (index == miss.parent || memo.entries[index].first_child != kMemoNone) continue;
    unlink_leaf(memo, index);
    return index;
  }
  return kMemoNone;
}

bool keep_memo_entry(StackMemo& memo, MemoIndex index, const MemoMiss& miss, size_t way,
                     uintptr_t pc) {
  StackMemoEntry& entry = memo.entries[index];
  if (miss.parent != kMemoNone && !fits_below(memo, miss, entry)) return false;
  entry.first_child = kMemoNone;
  if (miss.parent == kMemoNone) {
    entry.parent = kMemoNone;
    entry.next_sibling = kMemoNone;
    entry.root_way = static_cast<uint16_t>(way);
    memo.way_root[way] = index;
    memo.way_pc[way] = pc;
  } else {
    StackMemoEntry& parent = memo.entries[miss.parent];
    entry.parent = miss.parent;
    entry.diverge = static_cast<uint8_t>(miss.diverge);
    entry.next_sibling = parent.first_child;
    parent.first_child = index;
  }
  ++memo.stored;
  return true;
}

}  // namespace memtrack::rt
