// memcheck's leak classification over a sorted array of blocks. Runtime-safe: no malloc.
#include "runtime/leakcheck/reachability.h"

#include "runtime/leakcheck/guarded_read.h"

namespace memtrack::rt {
namespace {

uint64_t extent(const ScanBlock& b) {
  return b.size == 0 ? 1 : b.size;
}

// A word next to one the scan found (a chunk header, a heuristic's length): 0 if it cannot
// be read, which no check below accepts.
uint64_t read_word(uintptr_t address) {
  uint64_t value = 0;
  return try_read_word(address, &value) ? value : 0;
}

// glibc's malloc keeps raw pointers to chunk headers: main_arena.top, and the fd/bk links
// that stay in a chunk's first words after it is handed out again. A chunk header is the end
// of the previous chunk, which lies inside the previous block when that block uses its tail.
// memcheck never sees these (its allocator differs, and it ignores undefined words); here a
// pointer exactly at a block's chunk end is the allocator's, not the program's. (glibc's
// header is two size_t words; its smallest chunk four.)
bool is_allocator_link(const ScanBlock& block, uintptr_t value) {
  uint64_t chunk_size = read_word(block.start - kWord) & ~uint64_t{7};
  return chunk_size >= 4 * kWord && chunk_size < (uint64_t{1} << 40) &&
         value == block.start - 2 * kWord + chunk_size;
}

}  // namespace

bool ReachabilityScan::try_init(core::MmapArray<ScanBlock>& blocks,
                                const core::MmapArray<core::sys::MemoryRange>& readonly) {
  blocks_ = &blocks;
  readonly_ = &readonly;
  if (blocks.size() > 0) {
    lowest_ = blocks[0].start;
    for (const ScanBlock& b : blocks) {
      if (b.start + extent(b) > highest_) highest_ = b.start + extent(b);
    }
  }
  return work_.try_reserve(blocks.size() < 1024 ? 1024 : blocks.size());
}

long ReachabilityScan::find_block(uintptr_t address) const {
  if (address < lowest_ || address >= highest_) return -1;
  const core::MmapArray<ScanBlock>& b = *blocks_;
  size_t lo = core::first_after(b.data(), b.size(), address,
                                [](const ScanBlock& block) { return block.start; });
  if (lo == 0) return -1;
  const ScanBlock& candidate = b[lo - 1];
  return address - candidate.start < extent(candidate) ? static_cast<long>(lo - 1) : -1;
}

bool ReachabilityScan::is_readonly_data(uintptr_t address) const {
  const core::MmapArray<core::sys::MemoryRange>& r = *readonly_;
  size_t lo = core::first_after(r.data(), r.size(), address,
                                [](const core::sys::MemoryRange& range) { return range.start; });
  return lo > 0 && address < r[lo - 1].end;
}

// memcheck's default heuristics (--leak-check-heuristics=all): interior pointers that C++
// code legitimately keeps instead of a start pointer.
bool ReachabilityScan::heuristic_start(const ScanBlock& block, uintptr_t value) const {
  uint64_t offset = value - block.start;
  // length64: the first 8 bytes hold the length of the rest of the block.
  if (offset == 8 && block.size >= 8) {
    uint64_t first = read_word(block.start);
    if (kWord == 4) first |= read_word(block.start + 4) << 32;  // little-endian halves
    if (first == block.size - 8) return true;
  }
  // newarray: new T[n] for T with a destructor stores n (a size_t) in front of the elements.
  if (offset == kWord && block.size >= kWord) {
    uint64_t first = read_word(block.start);
    if (first != 0 && first <= block.size && (block.size - kWord) % first == 0) return true;
  }
  // stdstring (libstdc++'s copy-on-write string): a {length, capacity, refcount} header,
  // then capacity + 1 bytes of characters; the string points at the characters.
  if (offset == 3 * kWord && block.size >= 3 * kWord + 1) {
    uint64_t length = read_word(block.start);
    uint64_t capacity = read_word(block.start + kWord);
    if (length <= capacity && capacity + 3 * kWord + 1 == block.size) return true;
  }
  // multipleinheritance: a pointer to a secondary base inside an object; both that word and
  // the object's first word are vtable pointers into read-only data.
  if (offset % kWord == 0 && offset + kWord <= block.size && block.size >= 2 * kWord) {
    if (is_readonly_data(read_word(value)) && is_readonly_data(read_word(block.start))) {
      return true;
    }
  }
  return false;
}

// A pointer from a root or a reachable block (from_definite) to a block's start, or one a
// heuristic accepts, makes it reachable; anything else pointing into it only possibly lost.
void ReachabilityScan::reach(uintptr_t value, bool from_definite) {
  long index = find_block(value);
  if (index < 0) return;
  ScanBlock& block = (*blocks_)[static_cast<size_t>(index)];
  if (block.state == BlockState::kReachable) return;
  if (value != block.start && is_allocator_link(block, value)) return;
  bool start = value == block.start || heuristic_start(block, value);
  BlockState next = from_definite && start ? BlockState::kReachable : BlockState::kPossible;
  if (next <= block.state) return;
  block.state = next;
  if (!work_.try_push_back(static_cast<uint32_t>(index))) overflow_ = true;
}

void ReachabilityScan::scan_root_range(uintptr_t begin, uintptr_t end) {
  read_words(begin, end, [&](uintptr_t value) {
    if (value >= lowest_ && value < highest_) reach(value, true);
  });
}

void ReachabilityScan::scan_root_word(uintptr_t value) {
  reach(value, true);
}

void ReachabilityScan::mark_ignored() {
  for (const ScanBlock& b : *blocks_) {
    if (b.ignored != 0) reach(b.start, true);
  }
}

// Blocks are read guarded too: a program may mprotect part of a block it owns (a guard page
// at the end of a coroutine stack it allocated with posix_memalign).
void ReachabilityScan::scan_block_words(const ScanBlock& block, bool from_definite) {
  read_words(block.start, block.start + block.size, [&](uintptr_t value) {
    if (value >= lowest_ && value < highest_) reach(value, from_definite);
  });
}

bool ReachabilityScan::propagate() {
  while (work_.size() > 0) {
    uint32_t index = work_[work_.size() - 1];
    work_.pop_back();
    const ScanBlock& block = (*blocks_)[index];
    scan_block_words(block, block.state == BlockState::kReachable);
  }
  return !overflow_;
}

// In a clique, any pointer into an unreached block claims it for the leader; a block that
// led an earlier clique hands its indirect totals over to this one.
void ReachabilityScan::claim(long leader, uintptr_t value) {
  long index = find_block(value);
  if (index < 0 || index == leader) return;
  ScanBlock& block = (*blocks_)[static_cast<size_t>(index)];
  if (block.state != BlockState::kUnreached) return;
  if (value != block.start && is_allocator_link(block, value)) return;
  ScanBlock& head = (*blocks_)[static_cast<size_t>(leader)];
  block.state = BlockState::kIndirect;
  head.indirect_bytes += block.size + block.indirect_bytes;
  head.indirect_blocks += 1 + block.indirect_blocks;
  block.indirect_bytes = 0;
  block.indirect_blocks = 0;
  if (!work_.try_push_back(static_cast<uint32_t>(index))) overflow_ = true;
}

void ReachabilityScan::classify_unreached() {
  core::MmapArray<ScanBlock>& blocks = *blocks_;
  for (size_t leader = 0; leader < blocks.size(); ++leader) {
    if (blocks[leader].state != BlockState::kUnreached) continue;
    if (!work_.try_push_back(static_cast<uint32_t>(leader))) overflow_ = true;
    while (work_.size() > 0) {
      uint32_t index = work_[work_.size() - 1];
      work_.pop_back();
      const ScanBlock& block = blocks[index];
      read_words(block.start, block.start + block.size, [&](uintptr_t value) {
        if (value >= lowest_ && value < highest_) claim(static_cast<long>(leader), value);
      });
    }
  }
}

}  // namespace memtrack::rt
