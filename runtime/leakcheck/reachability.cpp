// memcheck's leak classification over a sorted array of blocks. Runtime-safe: no malloc.
#include "runtime/leakcheck/reachability.h"

#include "runtime/leakcheck/guarded_read.h"

namespace memtrack::rt {
namespace {

// How far ahead of the block being scanned the work list asks the cache for another's words.
constexpr size_t kPrefetchDistance = 4;

// A word next to one the scan found (a chunk header, a heuristic's length): 0 if it cannot
// be read, which no check below accepts.
uint64_t read_word(uintptr_t address) {
  uint64_t value = 0;
  return try_read_word(address, &value) ? value : 0;
}

}  // namespace

bool ReachabilityScan::try_init(ScanBlocks& blocks,
                                const core::MmapArray<core::sys::MemoryRange>& readonly) {
  blocks_ = &blocks;
  readonly_ = &readonly;
  // Address space only: pages are touched as the list grows.
  return work_.try_reserve(blocks.size() < 1024 ? 1024 : blocks.size());
}

size_t ReachabilityScan::bytes_used() const {
  return work_peak_ * sizeof(uint32_t) + cliques_.size() * sizeof(Clique) +
         root_edges_.size() * sizeof(RootEdge) +
         leaders_.size() * (sizeof(uint32_t) + sizeof(Rank));
}

// glibc's malloc keeps raw pointers to chunk headers: main_arena.top, and the fd/bk links
// that stay in a chunk's first words after it is handed out again. A chunk header is the end
// of the previous chunk, which lies inside the previous block when that block uses its tail.
// memcheck never sees these (its allocator differs, and it ignores undefined words); here a
// pointer exactly at a block's chunk end is the allocator's, not the program's. (glibc's
// header is two size_t words; its smallest chunk four.)
bool ReachabilityScan::is_allocator_link(size_t index, uintptr_t value) const {
  uintptr_t start = blocks_->start(index);
  uint64_t chunk_size = read_word(start - kWord) & ~uint64_t{7};
  return chunk_size >= 4 * kWord && chunk_size < (uint64_t{1} << 40) &&
         value == start - 2 * kWord + chunk_size;
}

bool ReachabilityScan::is_readonly_data(uintptr_t address) const {
  const core::MmapArray<core::sys::MemoryRange>& r = *readonly_;
  size_t lo = core::first_after(r.data(), r.size(), address,
                                [](const core::sys::MemoryRange& range) { return range.start; });
  return lo > 0 && address < r[lo - 1].end;
}

// memcheck's default heuristics (--leak-check-heuristics=all): interior pointers that C++
// code legitimately keeps instead of a start pointer.
bool ReachabilityScan::heuristic_start(size_t index, uintptr_t value) const {
  const uintptr_t start = blocks_->start(index);
  const uint64_t size = blocks_->size_of(index);
  uint64_t offset = value - start;
  // length64: the first 8 bytes hold the length of the rest of the block.
  if (offset == 8 && size >= 8) {
    uint64_t first = read_word(start);
    if (kWord == 4) first |= read_word(start + 4) << 32;  // little-endian halves
    if (first == size - 8) return true;
  }
  // newarray: new T[n] for T with a destructor stores n (a size_t) in front of the elements.
  if (offset == kWord && size >= kWord) {
    uint64_t first = read_word(start);
    if (first != 0 && first <= size && (size - kWord) % first == 0) return true;
  }
  // stdstring (libstdc++'s copy-on-write string): a {length, capacity, refcount} header,
  // then capacity + 1 bytes of characters; the string points at the characters.
  if (offset == 3 * kWord && size >= 3 * kWord + 1) {
    uint64_t length = read_word(start);
    uint64_t capacity = read_word(start + kWord);
    if (length <= capacity && capacity + 3 * kWord + 1 == size) return true;
  }
  // multipleinheritance: a pointer to a secondary base inside an object; both that word and
  // the object's first word are vtable pointers into read-only data.
  if (offset % kWord == 0 && offset + kWord <= size && size >= 2 * kWord) {
    if (is_readonly_data(read_word(value)) && is_readonly_data(read_word(start))) return true;
  }
  return false;
}

void ReachabilityScan::push(size_t index) {
  if (!work_.try_push_back(static_cast<uint32_t>(index))) overflow_ = true;
  if (work_.size() > work_peak_) work_peak_ = work_.size();
}

// A pointer from a root or a reachable block (from_definite) to a block's start, or one a
// heuristic accepts, makes it reachable; anything else pointing into it only possibly lost.
// Among the C runtime's roots, any pointer into an unreached block the runtime allocated
// makes it held by the runtime (begin_runtime_roots).
void ReachabilityScan::reach(uintptr_t value, bool from_definite) {
  long found = blocks_->find(value);
  if (found < 0) return;
  const size_t index = static_cast<size_t>(found);
  const BlockState state = blocks_->state(index);
  if (state == BlockState::kReachable) return;
  const bool at_start = value == blocks_->start(index);
  if (!at_start && is_allocator_link(index, value)) return;
  if (allocated_by_runtime_ != nullptr && state == BlockState::kUnreached &&
      allocated_by_runtime_(blocks_->stack_id(index))) {
    mark_held(index);
    blocks_->set_state(index, BlockState::kReachable);
    push(index);
    return;
  }
  bool start = at_start || heuristic_start(index, value);
  BlockState next = from_definite && start ? BlockState::kReachable : BlockState::kPossible;
  if (next <= state) return;
  blocks_->set_state(index, next);
  push(index);
}

template <typename F>
void ReachabilityScan::for_each_included(uintptr_t begin, uintptr_t end, F&& f) const {
  size_t i = core::first_after(excluded_, excluded_count_, begin,
                               [](const core::sys::MemoryRange& r) { return r.start; });
  if (i > 0 && excluded_[i - 1].end > begin) --i;  // a range that starts before begin
  uintptr_t cursor = begin;
  for (; i < excluded_count_ && excluded_[i].start < end; ++i) {
    if (excluded_[i].start > cursor) f(cursor, excluded_[i].start);
    if (excluded_[i].end > cursor) cursor = excluded_[i].end;
  }
  if (cursor < end) f(cursor, end);
}

void ReachabilityScan::scan_root_range(uintptr_t begin, uintptr_t end) {
  const ScanBlocks::Filter filter = blocks_->filter();
  for_each_included(begin, end, [&](uintptr_t from, uintptr_t to) {
    if (keeping_edges_) {
      read_words_at(from, to, [&](uintptr_t at, uintptr_t value) {
        if (filter.may_hold(value)) reach_root(at, value);
      });
      return;
    }
    read_words(from, to, [&](uintptr_t value) {
      if (filter.may_hold(value)) reach(value, true);
    });
  });
}

long ReachabilityScan::reference_target(uintptr_t value) const {
  long found = blocks_->find(value);
  if (found < 0) return -1;
  const size_t index = static_cast<size_t>(found);
  if (value == blocks_->start(index)) return found;
  if (is_allocator_link(index, value) || !heuristic_start(index, value)) return -1;
  return found;
}

bool ReachabilityScan::keep_root_edges() {
  keeping_edges_ = root_edges_.try_reserve(1024);
  edges_overflow_ = !keeping_edges_;
  return keeping_edges_;
}

void ReachabilityScan::reach_root(uintptr_t address, uintptr_t value) {
  if (keeping_edges_) {
    long target = reference_target(value);
    if (target >= 0 &&
        !root_edges_.try_push_back(RootEdge{address, static_cast<uint32_t>(target), source_})) {
      edges_overflow_ = true;
    }
  }
  reach(value, true);
}

void ReachabilityScan::set_excluded(const core::sys::MemoryRange* ranges, size_t count) {
  excluded_ = ranges;
  excluded_count_ = count;
}

void ReachabilityScan::begin_runtime_roots(bool (*allocated_by_runtime)(uint32_t stack_id)) {
  set_excluded(nullptr, 0);
  keeping_edges_ = false;
  // Without memory for the bits, the runtime's roots are scanned like the program's.
  if (held_.try_resize((blocks_->size() + 63) / 64)) allocated_by_runtime_ = allocated_by_runtime;
}

void ReachabilityScan::mark_held(size_t index) {
  held_[index / 64] |= uint64_t{1} << (index % 64);
}

void ReachabilityScan::scan_root_word(uintptr_t value) {
  reach_root(0, value);
}

void ReachabilityScan::mark_ignored() {
  for (size_t i = 0; i < blocks_->size(); ++i) {
    if (blocks_->ignored(i)) reach_root(0, blocks_->start(i));
  }
}

// Hands out the next block of the work list to read_ranges. The block a few places down
// the list is usually read a few steps later, so its first line is asked for now.
bool ReachabilityScan::pop_work(uintptr_t* begin, uintptr_t* end) {
  if (work_.size() == 0) return false;
  const size_t top = work_.size() - 1;
  const size_t index = work_[top];
  work_.pop_back();
  if (top >= kPrefetchDistance) blocks_->prefetch_contents(work_[top - kPrefetchDistance]);
  from_definite_ = blocks_->state(index) == BlockState::kReachable;
  *begin = blocks_->start(index);
  *end = *begin + static_cast<uintptr_t>(blocks_->size_of(index));
  return true;
}

// Blocks are read guarded too: a program may mprotect part of a block it owns (a guard page
// at the end of a coroutine stack it allocated with posix_memalign).
bool ReachabilityScan::propagate() {
  const ScanBlocks::Filter filter = blocks_->filter();
  read_ranges([&](uintptr_t* begin, uintptr_t* end) { return pop_work(begin, end); },
              [&](uintptr_t value) {
                if (filter.may_hold(value)) reach(value, from_definite_);
              });
  return !overflow_;
}

uint32_t ReachabilityScan::rank_of(size_t index) const {
  if (ranks_.size() == 0) return static_cast<uint32_t>(index);
  size_t at = core::first_after(ranks_.data(), ranks_.size(), index,
                                [](const Rank& r) { return uint64_t{r.index}; });
  return at > 0 && ranks_[at - 1].index == index ? ranks_[at - 1].rank : UINT32_MAX;
}

// The unreached blocks by (sequence, address); equal sequences (blocks that keep none) stay in
// address order, so the order is address order when no block has one.
bool ReachabilityScan::try_order_leaders(uint64_t (*sequence)(uintptr_t start)) {
  struct Keyed {
    uint64_t sequence;
    uint32_t index;
  };
  core::MmapArray<Keyed> keyed;
  bool any_sequence = false;
  for (size_t i = 0; i < blocks_->size(); ++i) {
    if (blocks_->state(i) != BlockState::kUnreached) continue;
    uint64_t key = sequence(blocks_->start(i));
    any_sequence = any_sequence || key != 0;
    if (!keyed.try_push_back(Keyed{key, static_cast<uint32_t>(i)})) return false;
  }
  if (!any_sequence) return true;
  core::heap_sort(keyed.data(), keyed.size(), [](const Keyed& a, const Keyed& b) {
    return a.sequence != b.sequence ? a.sequence < b.sequence : a.index < b.index;
  });
  if (!leaders_.try_reserve(keyed.size()) || !ranks_.try_reserve(keyed.size())) return false;
  for (size_t r = 0; r < keyed.size(); ++r) {
    (void)leaders_.try_push_back(keyed[r].index);
    (void)ranks_.try_push_back(Rank{keyed[r].index, static_cast<uint32_t>(r)});
  }
  core::heap_sort(ranks_.data(), ranks_.size(),
                  [](const Rank& a, const Rank& b) { return a.index < b.index; });
  return true;
}

// In a clique, any pointer into an unreached block claims it for the leader. An unreached
// block before the leader in the leaders' order led a clique of its own, which it hands over
// to this one.
void ReachabilityScan::claim(size_t leader, uintptr_t value) {
  long found = blocks_->find(value);
  if (found < 0 || static_cast<size_t>(found) == leader) return;
  const size_t index = static_cast<size_t>(found);
  if (blocks_->state(index) != BlockState::kUnreached) return;
  if (value != blocks_->start(index) && is_allocator_link(index, value)) return;
  blocks_->set_state(index, BlockState::kIndirect);
  if (cliques_.size() == 0 || cliques_[cliques_.size() - 1].leader != leader) {
    if (!cliques_.try_push_back(Clique{static_cast<uint32_t>(leader), 0, 0})) {
      overflow_ = true;
      return;
    }
  }
  Clique& head = cliques_[cliques_.size() - 1];
  head.bytes += blocks_->size_of(index);
  head.blocks += 1;
  const uint32_t rank = rank_of(index);
  if (rank > rank_of(leader)) {
    push(index);
    return;
  }
  // A block before the leader led its own clique, which already holds every unreached block
  // it reaches: it hands the clique over, and neither it nor its clique is read again. The
  // cliques are in the leaders' order.
  size_t at = core::first_after(cliques_.data(), cliques_.size() - 1, rank,
                                [this](const Clique& c) { return uint64_t{rank_of(c.leader)}; });
  if (at > 0 && cliques_[at - 1].leader == index) {
    Clique& earlier = cliques_[at - 1];
    head.bytes += earlier.bytes;
    head.blocks += earlier.blocks;
    earlier.bytes = 0;
    earlier.blocks = 0;
  }
}

// The leaders go in their order; each one's clique is read before the next leader.
bool ReachabilityScan::classify_unreached(uint64_t (*sequence)(uintptr_t start)) {
  leaders_.clear();
  ranks_.clear();
  if (sequence != nullptr && !try_order_leaders(sequence)) return false;
  const ScanBlocks::Filter filter = blocks_->filter();
  const bool by_address = leaders_.size() == 0;
  const size_t count = by_address ? blocks_->size() : leaders_.size();
  size_t next = 0;
  auto next_range = [&](uintptr_t* begin, uintptr_t* end) {
    if (pop_work(begin, end)) return true;
    for (; next < count; ++next) {
      size_t candidate = by_address ? next : leaders_[next];
      if (blocks_->state(candidate) == BlockState::kUnreached) break;
    }
    if (next == count) return false;
    leader_ = by_address ? next : leaders_[next];
    ++next;
    *begin = blocks_->start(leader_);
    *end = *begin + static_cast<uintptr_t>(blocks_->size_of(leader_));
    return true;
  };
  read_ranges(next_range, [&](uintptr_t value) {
    if (filter.may_hold(value)) claim(leader_, value);
  });
  return !overflow_;
}

}  // namespace memtrack::rt
