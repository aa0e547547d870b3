// The scan's block array: packing, an in-place radix sort by address, and the two-level
// index of block starts. Runtime-safe: mmap-backed arrays only, no recursion deeper than the
// eight digits of an address.
#include "runtime/leakcheck/scan_blocks.h"

#include "core/stack_depot.h"

namespace memtrack::rt {
namespace {

static_assert(core::StackDepot::kMaxStacks <= (uint32_t{1} << 24), "stack ids fit in 24 bits");

// How many of the n items, sorted by key(item), have a key <= x. Branch-free (the
// comparison becomes a conditional move), so a search costs its loads and no mispredictions.
template <typename T, typename Key>
size_t count_at_or_below(const T* items, size_t n, uintptr_t x, Key key) {
  if (n == 0) return 0;
  const T* base = items;
  size_t len = n;
  while (len > 1) {
    size_t half = len / 2;
    base = key(base[half]) <= x ? base + half : base;
    len -= half;
  }
  return static_cast<size_t>(base - items) + (key(*base) <= x ? 1 : 0);
}

// In-place most-significant-digit radix sort (American flag sort) of 16-byte records by
// their first word, 8 bits a pass: a histogram, then every record is swapped straight into
// its bucket. Each pass takes the top 8 bits of what varies among its records (their
// smallest and largest key), so the gap between the brk heap and mmapped blocks costs no
// pass; on a dense heap two passes leave runs short enough for insertion sort. It needs no
// second array (a least-significant-digit sort would need one as large as the blocks) and
// reads the records in order, where a comparison sort of a million records misses the cache
// on most of its 20 million comparisons.
constexpr unsigned kDigitBits = 8;
constexpr size_t kBuckets = size_t{1} << kDigitBits;
constexpr size_t kLevels = 64 / kDigitBits + 1;
constexpr size_t kInsertionSortRun = 32;
constexpr size_t kPrefetchAhead = 8;  // records: two cache lines

// One histogram per level of the recursion (at most kLevels deep: every level takes 8 more
// bits), and the smallest and largest key that lands in each bucket: 72 KiB of .bss rather
// than of stack, which may be a small alternate signal stack. Used under the report lock.
struct RadixLevel {
  size_t end[kBuckets];
  size_t next[kBuckets];
  uint64_t low[kBuckets];
  uint64_t high[kBuckets];
};
RadixLevel g_radix_levels[kLevels];

template <typename Record>
void insertion_sort(Record* items, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    Record moving = items[i];
    size_t j = i;
    for (; j > 0 && items[j - 1].start_bits > moving.start_bits; --j) items[j] = items[j - 1];
    items[j] = moving;
  }
}

// Sorts the n records, whose keys lie in [low, high], by key.
template <typename Record>
void radix_sort(Record* items, size_t n, uint64_t low, uint64_t high, unsigned depth) {
  if (n <= kInsertionSortRun || depth == kLevels) {
    insertion_sort(items, n);
    return;
  }
  const unsigned bits = 64 - static_cast<unsigned>(__builtin_clzll((high - low) | 1));
  const unsigned shift = bits > kDigitBits ? bits - kDigitBits : 0;
  auto digit = [&](const Record& r) {
    return static_cast<size_t>(((r.start_bits - low) >> shift) & (kBuckets - 1));
  };
  RadixLevel& level = g_radix_levels[depth];
  for (size_t b = 0; b < kBuckets; ++b) {
    level.end[b] = 0;
    level.low[b] = UINT64_MAX;
    level.high[b] = 0;
  }
  for (size_t i = 0; i < n; ++i) ++level.end[digit(items[i])];
  size_t sum = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    level.next[b] = sum;
    sum += level.end[b];
    level.end[b] = sum;
  }
  // Every record passes here once, as it lands in its bucket: the bucket's bounds come for
  // free for the next level's digits.
  auto landed = [&](size_t d, uint64_t key) {
    level.low[d] = key < level.low[d] ? key : level.low[d];
    level.high[d] = key > level.high[d] ? key : level.high[d];
  };
  for (size_t b = 0; b < kBuckets; ++b) {
    while (level.next[b] < level.end[b]) {
      Record moving = items[level.next[b]];
      size_t d = digit(moving);
      if (d == b) {  // already in place
        landed(b, moving.start_bits);
        ++level.next[b];
        continue;
      }
      while (d != b) {  // put it in its bucket; carry on with the record it displaces
        // Each bucket is written in order, but 256 write positions are more streams than
        // the hardware prefetcher follows: ask for the line after next.
        __builtin_prefetch(&items[level.next[d] + kPrefetchAhead], 1);
        landed(d, moving.start_bits);
        Record displaced = items[level.next[d]];
        items[level.next[d]++] = moving;
        moving = displaced;
        d = digit(moving);
      }
      landed(b, moving.start_bits);
      items[level.next[b]++] = moving;
    }
  }
  if (shift == 0) return;
  size_t begin = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    const size_t bucket_end = level.end[b];
    if (bucket_end - begin > 1) {
      radix_sort(items + begin, bucket_end - begin, level.low[b], level.high[b], depth + 1);
    }
    begin = bucket_end;
  }
}

}  // namespace

bool ScanBlocks::try_add(uintptr_t start, uint64_t size, uint32_t stack_id, bool ignored) {
  if (blocks_.size() >= UINT32_MAX - 1) return false;
  uint64_t packed_size = size;
  if (size >= kHugeSize) {
    if (!huge_.try_push_back(HugeBlock{start, size})) return false;
    packed_size = kHugeSize;
  }
  Packed p;
  p.start_bits = static_cast<uint64_t>(start) | (ignored ? kIgnoredBit : 0);
  p.size_stack = packed_size | static_cast<uint64_t>(stack_id) << kSizeBits;
  if (!blocks_.try_push_back(p)) return false;
  if (blocks_.size() == 1 || start < lowest_) lowest_ = start;
  uint64_t end = start + (size == 0 ? 1 : size);
  if (end > highest_) highest_ = static_cast<uintptr_t>(end);
  return true;
}

// Marks (with the state kReachable, which no block has before the scan) each block that
// holds the start of its successor, or that its successor, starting at the same address,
// holds; then closes the gaps. Blocks that do not nest (a pool's superblock and its blocks
// do) overlap only if the program's annotations are wrong: the larger goes, as memcheck's.
void ScanBlocks::drop_containers() {
  const size_t n = blocks_.size();
  for (size_t i = 0; i + 1 < n; ++i) {
    const uintptr_t end = start(i) + static_cast<uintptr_t>(extent(i));
    if (start(i + 1) >= end) continue;
    const uintptr_t next_end = start(i + 1) + static_cast<uintptr_t>(extent(i + 1));
    set_state(next_end > end ? i + 1 : i, BlockState::kReachable);
  }
  size_t kept = 0;
  lowest_ = 0;
  highest_ = 0;
  for (size_t i = 0; i < n; ++i) {
    if (state(i) == BlockState::kReachable) continue;
    blocks_[kept] = blocks_[i];
    if (kept == 0) lowest_ = start(kept);
    const uintptr_t end = start(kept) + static_cast<uintptr_t>(extent(kept));
    if (end > highest_) highest_ = end;
    ++kept;
  }
  dropped_ = n - kept;
  (void)blocks_.try_resize(kept);  // shrinking maps nothing
}

bool ScanBlocks::try_sort(bool drop_containing) {
  size_t n = blocks_.size();
  size_t sorted = n == 0 ? 0 : 1;  // the sorted run the blocks start with
  while (sorted < n && blocks_[sorted - 1].start_bits < blocks_[sorted].start_bits) ++sorted;
  if (sorted < n && !try_sort_after_run(sorted)) {
    uint64_t high = 0;
    for (const Packed& p : blocks_) high = p.start_bits > high ? p.start_bits : high;
    radix_sort(blocks_.data(), n, lowest_, high, 0);
  }
  if (drop_containing) {
    drop_containers();
    n = blocks_.size();
  }
  // Clusters: runs of blocks with no gap of kClusterGap between one's end and the next start.
  if (!bucket_first_.try_reserve(n / kBlocksPerBucket + 64)) return false;
  size_t first = 0;
  uintptr_t end = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && start(i) > end && start(i) - end >= kClusterGap) {
      if (!try_add_cluster(first, i - 1, end)) return false;
      first = i;
    }
    uintptr_t block_end = start(i) + static_cast<uintptr_t>(extent(i));
    if (block_end > end) end = block_end;
  }
  return (n == 0 || try_add_cluster(first, n - 1, end)) && try_build_granule_filter();
}

// The blocks after the first `run` (sorted already: the heap's, added in address order) are
// sorted on their own and merged in from the end, through a copy of them: linear in the
// blocks, where sorting all again would move the run's records too. Only for a tail of at
// most a quarter (usually the few blocks of glibc's allocator); false, with nothing changed,
// otherwise or if the copy's memory cannot be had.
bool ScanBlocks::try_sort_after_run(size_t run) {
  const size_t n = blocks_.size();
  const size_t tail = n - run;
  if (tail > n / 4) return false;
  core::MmapArray<Packed> copy;
  if (!copy.try_resize(tail)) return false;
  uint64_t low = UINT64_MAX;
  uint64_t high = 0;
  for (size_t i = 0; i < tail; ++i) {
    copy[i] = blocks_[run + i];
    low = copy[i].start_bits < low ? copy[i].start_bits : low;
    high = copy[i].start_bits > high ? copy[i].start_bits : high;
  }
  radix_sort(copy.data(), tail, low, high, 0);
  size_t out = n;
  size_t from_run = run;
  size_t from_tail = tail;
  while (from_tail > 0) {
    if (from_run > 0 && blocks_[from_run - 1].start_bits > copy[from_tail - 1].start_bits) {
      blocks_[--out] = blocks_[--from_run];
    } else {
      blocks_[--out] = copy[--from_tail];
    }
  }
  return true;
}

bool ScanBlocks::try_build_granule_filter() {
  uint64_t granules = 0;
  for (const Cluster& c : clusters_) {
    granules += ((c.end - 1) >> kGranuleShift) - (c.begin >> kGranuleShift) + 1;
  }
  unsigned bits_log2 = kMinGranuleBitsLog2;
  while (bits_log2 < kMaxGranuleBitsLog2 &&
         (uint64_t{1} << bits_log2) < granules * kGranuleBitsPerGranule) {
    ++bits_log2;
  }
  hash_shift_ = 64 - bits_log2;
  const size_t words = (size_t{1} << bits_log2) / 64;
  if (!granule_bits_.try_resize(words)) return false;
  for (uint64_t& word : granule_bits_) word = 0;
  for (const Cluster& c : clusters_) {
    const uint64_t last = (c.end - 1) >> kGranuleShift;
    if (last - (c.begin >> kGranuleShift) >= words * 64) {  // a huge block: every bit
      for (uint64_t& word : granule_bits_) word = ~uint64_t{0};
      break;
    }
    for (uint64_t granule = c.begin >> kGranuleShift; granule <= last; ++granule) {
      const uint64_t bit = granule_bit(granule, hash_shift_);
      granule_bits_[bit / 64] |= uint64_t{1} << (bit % 64);
    }
  }
  return true;
}

bool ScanBlocks::try_add_cluster(size_t first, size_t last, uintptr_t end) {
  Cluster c;
  c.begin = start(first);
  c.end = end;
  c.first_bucket = static_cast<uint32_t>(bucket_first_.size());
  // The smallest bucket size (a power of two) that makes at most `wanted` buckets.
  const uint64_t wanted = (last - first + 1) / kBlocksPerBucket + 1;
  const uint64_t span = end - c.begin;  // at least 1
  c.shift = 3;
  while (c.shift < 63 && ((span - 1) >> c.shift) >= wanted) ++c.shift;
  const uint64_t buckets = ((span - 1) >> c.shift) + 1;
  if (!clusters_.try_push_back(c)) return false;
  size_t i = first;
  for (uint64_t b = 0; b < buckets; ++b) {
    const uintptr_t bucket_start = c.begin + static_cast<uintptr_t>(b << c.shift);
    while (i <= last && start(i) < bucket_start) ++i;
    if (!bucket_first_.try_push_back(static_cast<uint32_t>(i))) return false;
  }
  return bucket_first_.try_push_back(static_cast<uint32_t>(last + 1));
}

uint64_t ScanBlocks::huge_size(uintptr_t start) const {
  for (const HugeBlock& h : huge_) {
    if (h.start == start) return h.size;
  }
  return kHugeSize;  // not reached: every packed huge size has its entry
}

size_t ScanBlocks::first_at(uintptr_t address) const {
  if (address == 0) return 0;
  // The blocks starting before `address`, that is at or below address - 1.
  return count_at_or_below(blocks_.data(), blocks_.size(), address - 1,
                           [](const Packed& p) { return p.start_bits & ~kFlagMask; });
}

long ScanBlocks::find(uintptr_t address) const {
  if (address - lowest_ >= highest_ - lowest_) return -1;
  const Cluster* c = clusters_.data();
  if (clusters_.size() > 1) {
    c += count_at_or_below(clusters_.data(), clusters_.size(), address,
                           [](const Cluster& cluster) { return cluster.begin; }) -
         1;  // at least one: the first cluster begins at lowest_
  }
  if (address >= c->end) return -1;
  const uint32_t* bucket =
      bucket_first_.data() + c->first_bucket + ((address - c->begin) >> c->shift);
  // The blocks starting in the bucket are [bucket[0], bucket[1]); the one containing
  // `address` is the last of them at or below it, or else the last block before the bucket.
  size_t i = bucket[0];
  const size_t end = bucket[1];
  if (end - i <= 2 * kBlocksPerBucket) {
    while (i < end && start(i) <= address) ++i;
  } else {
    i += count_at_or_below(blocks_.data() + i, end - i, address,
                           [](const Packed& p) { return p.start_bits & ~kFlagMask; });
  }
  const size_t candidate = i - 1;  // in the cluster: its first block starts at or below
  const uint64_t size = blocks_[candidate].size_stack & kSizeMask;
  const uint64_t reach = size == 0 ? 1 : size == kHugeSize ? huge_size(start(candidate)) : size;
  return address - start(candidate) < reach ? static_cast<long>(candidate) : -1;
}

size_t ScanBlocks::bytes_used() const {
  return blocks_.size() * sizeof(Packed) + huge_.size() * sizeof(HugeBlock) +
         clusters_.size() * sizeof(Cluster) + bucket_first_.size() * sizeof(uint32_t) +
         granule_bits_.size() * sizeof(uint64_t);
}

}  // namespace memtrack::rt
