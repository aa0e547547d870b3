// The live blocks of a leak scan: 16 bytes each (address, size, stack id and the scan's
// state), sorted by address, with the lookup the scan makes for every candidate pointer.
// Runtime-safe: mmap-backed arrays only. Not thread safe; one per scan.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/mmap_array.h"

namespace memtrack::rt {

// memcheck's verdicts as the scan builds them: a definitely lost block stays kUnreached.
enum class BlockState : uint8_t { kUnreached = 0, kIndirect = 1, kPossible = 2, kReachable = 3 };

class ScanBlocks {
 public:
  // Maps room for `count` blocks up front, so adding them copies nothing. False if it
  // cannot be mapped.
  [[nodiscard]] bool try_reserve(size_t count) { return blocks_.try_reserve(count); }

  // Adds a block (any order; start 8-aligned and nonzero, stack id below 2^24, as the
  // allocation table keeps them). Returns false if memory cannot be mapped, or for more than
  // 2^32 - 2 blocks (the scan names blocks by 32-bit index).
  [[nodiscard]] bool try_add(uintptr_t start, uint64_t size, uint32_t stack_id, bool ignored);

  // Sorts the blocks by address and builds the lookup index; call once, after the last
  // try_add. Returns false if the index cannot be mapped. Blocks added in address order (the
  // heap's, SmallHeap::for_each_in_address_order) cost no sort, and a few more after them a
  // merge. With `drop_containers` (blocks of the program's own allocators were added), a
  // block that holds the start of another is left out first, as memcheck leaves out a
  // pool's superblock (of two blocks that start together, the larger): dropped_containers()
  // says how many.
  [[nodiscard]] bool try_sort(bool drop_containers = false);
  size_t dropped_containers() const { return dropped_; }

  size_t size() const { return blocks_.size(); }
  uintptr_t start(size_t i) const {
    return static_cast<uintptr_t>(blocks_[i].start_bits & ~kFlagMask);
  }
  uint64_t size_of(size_t i) const {
    uint64_t size = blocks_[i].size_stack & kSizeMask;
    return size == kHugeSize ? huge_size(start(i)) : size;
  }
  // The bytes the scan treats as the block's: a zero-size block counts as one byte.
  uint64_t extent(size_t i) const {
    uint64_t size = size_of(i);
    return size == 0 ? 1 : size;
  }
  uint32_t stack_id(size_t i) const {
    return static_cast<uint32_t>(blocks_[i].size_stack >> kSizeBits);
  }
  bool ignored(size_t i) const { return (blocks_[i].start_bits & kIgnoredBit) != 0; }
  BlockState state(size_t i) const {
    return static_cast<BlockState>(blocks_[i].start_bits & kStateMask);
  }
  void set_state(size_t i, BlockState state) {
    blocks_[i].start_bits = (blocks_[i].start_bits & ~kStateMask) | static_cast<uint64_t>(state);
  }
  // Asks the cache for the block's first line, which its scan will read next.
  void prefetch_contents(size_t i) const {
    __builtin_prefetch(reinterpret_cast<const void*>(start(i)));
  }

  // The lowest block start, and one past the end of the block that ends highest (0, 0 when
  // empty): no pointer outside [lowest, highest) can be in a block.
  uintptr_t lowest() const { return lowest_; }
  uintptr_t highest() const { return highest_; }

  // The test a scan makes of every word it reads before it looks the word up: false when no
  // block can hold `address`. A word below the lowest block or above the highest fails at
  // once; one between them fails unless its 1 MiB granule is marked in a bitmap of the
  // granules the clusters cover (hashed, so that a heap spread over the address space needs
  // no larger bitmap; a collision only sends a word on to find). Most words a large program
  // keeps in memory that point into its own mappings lie between the heap's chunks without
  // being in any block (cc1plus's garbage-collected heap: 5.2 million of its 5.4 million
  // words between memtrack's lowest and highest block), and those would otherwise cost the
  // binary search of the clusters each. A copy, valid until the blocks change.
  struct Filter {
    uintptr_t lowest;
    uintptr_t span;  // highest - lowest
    const uint64_t* granule_bits;
    unsigned hash_shift;
    bool may_hold(uintptr_t address) const {
      if (address - lowest >= span) return false;
      const uint64_t bit = granule_bit(address >> kGranuleShift, hash_shift);
      return (granule_bits[bit / 64] >> (bit % 64) & 1) != 0;
    }
  };
  // Valid after try_sort.
  Filter filter() const {
    return Filter{lowest_, highest_ - lowest_, granule_bits_.data(), hash_shift_};
  }

  // Index of the first block starting at or after `address` (size() if none).
  size_t first_at(uintptr_t address) const;
  // Index of the block containing `address`, or -1. Constant time on a heap of any shape:
  // the blocks form clusters (runs without a gap of kClusterGap), and each cluster has a
  // table of buckets (of a power-of-two size chosen so that a bucket holds about
  // kBlocksPerBucket blocks) giving the first block starting in each, so a lookup reads one
  // cluster entry, two table entries and a few neighbouring blocks.
  long find(uintptr_t address) const;

  // Memory the array and its index take (for the scan's statistics).
  size_t bytes_used() const;

 private:
  // start_bits: the start (8-aligned), state in bits 0-1, ignored in bit 2.
  // size_stack: the size in bits 0-39 (kHugeSize: the size is in huge_), stack id in 40-63.
  struct Packed {
    uint64_t start_bits;
    uint64_t size_stack;
  };
  static_assert(sizeof(Packed) == 16);
  struct HugeBlock {
    uintptr_t start;
    uint64_t size;
  };
  static constexpr uint64_t kStateMask = 3;
  static constexpr uint64_t kIgnoredBit = 4;
  static constexpr uint64_t kFlagMask = 7;
  static constexpr uint64_t kSizeBits = 40;
  static constexpr uint64_t kSizeMask = (uint64_t{1} << kSizeBits) - 1;
  static constexpr uint64_t kHugeSize = kSizeMask;
  static constexpr uintptr_t kClusterGap = uintptr_t{1} << 20;
  static constexpr size_t kBlocksPerBucket = 4;
  // The filter's granules are kClusterGap large, so that a cluster covers few of them.
  static constexpr unsigned kGranuleShift = 20;
  static_assert(uintptr_t{1} << kGranuleShift == kClusterGap);
  // At least this many bits per granule covered (a word outside the clusters passes the
  // filter with a chance of at most 1 in 8), and between 512 bytes and 1 MiB of bitmap.
  static constexpr uint64_t kGranuleBitsPerGranule = 8;
  static constexpr unsigned kMinGranuleBitsLog2 = 12;
  static constexpr unsigned kMaxGranuleBitsLog2 = 23;

  static uint64_t granule_bit(uint64_t granule, unsigned hash_shift) {
    return (granule * 0x9e3779b97f4a7c15ULL) >> hash_shift;  // Fibonacci hashing: the top bits
  }

  struct Cluster {
    uintptr_t begin;        // its first block's start
    uintptr_t end;          // one past the furthest end of its blocks
    uint32_t first_bucket;  // its buckets in bucket_first_, plus one closing entry
    uint32_t shift;         // log2 of its bucket size
  };

  uint64_t huge_size(uintptr_t start) const;
  [[nodiscard]] bool try_add_cluster(size_t first, size_t last, uintptr_t end);
  [[nodiscard]] bool try_build_granule_filter();
  [[nodiscard]] bool try_sort_after_run(size_t run);
  void drop_containers();

  core::MmapArray<Packed> blocks_;
  core::MmapArray<HugeBlock> huge_;  // sizes of 1 TiB or more: never more than a few
  core::MmapArray<Cluster> clusters_;
  core::MmapArray<uint32_t> bucket_first_;  // per bucket: the first block starting in it or later
  core::MmapArray<uint64_t> granule_bits_;  // the filter's bitmap
  unsigned hash_shift_ = 64 - kMinGranuleBitsLog2;
  uintptr_t lowest_ = 0;
  uintptr_t highest_ = 0;
  size_t dropped_ = 0;
};

}  // namespace memtrack::rt
