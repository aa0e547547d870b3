// Deduplicated storage of stack traces: frames -> 32-bit id, id -> frames.
// Runtime-safe: memory comes from mmap only; lookups of known stacks take no lock.
//
//   buckets_[hash & mask] ──▶ Node ──▶ Node ──▶ null      (singly linked, prepend only)
//   id_blocks_[id >> 16][id & 0xffff] ──▶ Node            (two-level id index)
//
// Nodes are never removed, so a reader can walk a chain without a lock: a new node is fully
// written before it is published with a release store of the bucket head, and readers load
// the head with acquire. Inserts into one bucket stripe serialise on that stripe's lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/spin_lock.h"

namespace memtrack::core {

struct StackView {
  const uintptr_t* frames = nullptr;
  uint32_t size = 0;
};

// Thread safe. Zero-initialised memory is a valid empty depot, so it can live in .bss.
class StackDepot {
 public:
  static constexpr uint32_t kInvalidId = 0;
  // Ids run from 1 to kMaxStacks and must fit the allocation table's 24-bit stack field.
  static constexpr uint32_t kMaxStacks = (1u << 24) - 1;

  // Returns the id of this sequence of frames, adding it if new. Returns kInvalidId when
  // memory cannot be mapped or kMaxStacks distinct stacks exist already. An empty stack is
  // a valid stack with its own id.
  uint32_t intern(const uintptr_t* frames, uint32_t size);

  // Returns the frames of `id`, or an empty view with frames == nullptr for an unknown id.
  StackView get(uint32_t id) const;

  // Number of distinct stacks stored.
  uint32_t size() const { return count_.load(std::memory_order_acquire); }

  size_t mapped_bytes() const { return mapped_bytes_.load(std::memory_order_relaxed); }

  // fork() support, as for AllocTable.
  void lock_all();
  void unlock_all();
  void reset_after_fork();

  // As intern(), with `hash` == hash_frames(frames, size) computed by the caller (the
  // unwinder hashes frames as it finds them).
  uint32_t intern_hashed(const uintptr_t* frames, uint32_t size, uint64_t hash);

  static uint64_t hash_frames(const uintptr_t* frames, uint32_t size) {
    StackHash hash;
    for (uint32_t i = 0; i < size; ++i) hash.add(frames[i]);
    return hash.finish(size);
  }

  // The hash of hash_frames, one frame at a time.
  struct StackHash {
    uint64_t state = 0xcbf29ce484222325ull;
    void add(uintptr_t frame) {
      state ^= static_cast<uint64_t>(frame);
      state *= 0x9E3779B97F4A7C15ull;
      state ^= state >> 29;
    }
    uint64_t finish(uint32_t size) const { return state ^ size; }
  };

 private:
  struct Node {
    const Node* next;
    uint64_t hash;
    uint32_t id;
    uint32_t size;
    uintptr_t frames[1];  // `size` entries follow; at least one slot for the empty stack
  };

  static constexpr size_t kBucketBits = 18;
  static constexpr size_t kBucketCount = size_t{1} << kBucketBits;
  static constexpr size_t kStripeCount = 64;
  static constexpr size_t kIdBlockBits = 16;
  static constexpr size_t kIdBlockSize = size_t{1} << kIdBlockBits;
  static constexpr size_t kIdBlockCount = (kMaxStacks + kIdBlockSize - 1) / kIdBlockSize;
  static constexpr size_t kChunkBytes = size_t{1} << 20;

  bool ensure_buckets();
  const Node* find(uint64_t hash, const uintptr_t* frames, uint32_t size) const;
  Node* allocate_node_locked(uint32_t size);
  bool register_id_locked(Node* node);

  std::atomic<std::atomic<const Node*>*> buckets_{nullptr};
  SpinLock setup_lock_;
  SpinLock stripes_[kStripeCount];
  SpinLock storage_lock_;  // guards chunk_*, id_blocks_ growth and count_ increments
  char* chunk_cursor_ = nullptr;
  size_t chunk_left_ = 0;
  std::atomic<const Node**> id_blocks_[kIdBlockCount] = {};
  std::atomic<uint32_t> count_{0};  // ids are 1..count_
  std::atomic<size_t> mapped_bytes_{0};
};

}  // namespace memtrack::core
