// The guard pool of --check-heap=sample (docs/heap-errors.md): a few sampled blocks, each on
// a page of its own between inaccessible guard pages, GWP-ASan's idea for any binary. A block
// lies at the end of its page (an overflow faults at the first byte past it) or at its start
// (an underflow does), chosen at random per block unless fixed; the rest of the page holds a
// pattern that the free checks (a write there that did not fault). A freed block's page is
// made inaccessible and its slot waits in a queue, oldest reused first, so a use after free
// faults for as long as possible. The fault handler asks locate() which block an address
// belongs to. Runtime-safe: mmap and mprotect only, no libc beyond the raw system calls.
//
// The mapping: | guard | page 0 | guard | page 1 | ... | page n-1 | guard |
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/spin_lock.h"

namespace memtrack::core {

// Where a block lies on its page.
enum class GuardSide : uint8_t { kRandom = 0, kEnd = 1, kStart = 2 };

// The bytes of a guarded block's page outside the block.
inline constexpr uint8_t kGuardPattern = 0xab;

class GuardPool {
 public:
  enum class SlotState : uint8_t { kUnused = 0, kLive = 1, kFreed = 2 };

  // One slot's block, as its allocation and its free left it.
  struct Slot {
    std::atomic<SlotState> state{SlotState::kUnused};
    // Made accessible after a reported fault, or left accessible by a failed mprotect: never
    // reused. Written by the fault handler without the lock.
    std::atomic<bool> retired{false};
    bool edge_reported = false;  // its changed bytes were reported (by the caller's rule)
    uint32_t alloc_stack = 0;
    uint32_t free_stack = 0;
    uint32_t alloc_tid = 0;
    uint32_t free_tid = 0;
    uintptr_t start = 0;
    size_t size = 0;
  };

  // What an address the program touched belongs to (locate).
  struct Culprit {
    const Slot* slot = nullptr;  // null: no block near it (a slot never used)
    size_t index = 0;
    bool in_guard_page = false;  // else in the block's own page
  };

  // Maps the pool for `slots` blocks of up to `page` bytes (the system's page size, a power
  // of two). Returns false if the address space or the metadata cannot be mapped; the pool
  // then stays off. Not thread safe: called once at start-up.
  bool init(size_t slots, size_t page, GuardSide side, uint64_t seed);
  bool enabled() const { return span_ != 0; }

  // True if `address` lies anywhere in the pool (block pages and guard pages). One compare.
  bool owns(uintptr_t address) const { return address - base_ < span_; }

  // A block of `size` bytes at `alignment` (0: the size's natural alignment, 8 or 16; else a
  // power of two of at least 8), or 0 if the pool cannot place it: too large or too aligned for a
  // page, no free slot, or mprotect failed. The block's bytes hold the pattern. Thread safe.
  uintptr_t allocate(size_t size, size_t alignment, uint32_t alloc_stack, uint32_t tid);
  static constexpr size_t kMinAlignment = 8;
  // Sets a live block's allocation stack (known only once the block is recorded).
  void set_alloc_stack(uintptr_t address, uint32_t stack_id);

  enum class FreeResult {
    kFreed,    // the block's page is inaccessible now
    kNotLive,  // no live block starts there (freed already, or never one): nothing done
  };
  // Frees the block at `address`. *first_changed: the first byte of its page outside the
  // block that no longer holds the pattern, or 0. *slot_out: its slot. Thread safe.
  FreeResult free(uintptr_t address, uint32_t free_stack, uint32_t tid, uintptr_t* first_changed,
                  const Slot** slot_out);

  // The live block starting at `address`, or null. Thread safe (its fields may be stale).
  const Slot* live_block(uintptr_t address) const;
  // The slot `address` of the pool belongs to: its own page's, or for a guard page the
  // nearer of the blocks on either side (GWP-ASan's rule). Async-signal-safe, lock-free.
  Culprit locate(uintptr_t address) const;
  // The first byte of a live block's page outside the block that lost the pattern, or 0.
  uintptr_t first_changed_byte(const Slot& slot) const;

  // After a reported fault at `address` (continue mode): makes the page it lies on accessible
  // for good, so the access goes through when the handler returns, and retires the slots
  // beside it. Returns false if mprotect failed. Async-signal-safe.
  bool open_page_of(uintptr_t address);

  size_t slot_count() const { return slots_count_; }
  Slot& slot(size_t i) { return slots_[i]; }
  size_t page_size() const { return page_; }
  uintptr_t page_of_slot(size_t i) const { return base_ + (2 * i + 1) * page_; }
  uint64_t placed() const { return placed_.load(std::memory_order_relaxed); }
  // Allocations the sampler picked that no free slot could take.
  uint64_t pool_full() const { return pool_full_.load(std::memory_order_relaxed); }

  // fork(): the child has one thread, whatever held the lock.
  void lock() { lock_.lock(); }
  void unlock() { lock_.unlock(); }
  void reset_after_fork() { lock_.reset_after_fork(); }

 private:
  bool next_at_end();   // under lock_
  uint32_t pop_slot();  // under lock_; kNone if none
  static constexpr uint32_t kNone = UINT32_MAX;

  uintptr_t base_ = 0;
  size_t span_ = 0;
  size_t page_ = 0;
  size_t slots_count_ = 0;
  GuardSide side_ = GuardSide::kRandom;
  Slot* slots_ = nullptr;
  // The slots free to take, oldest first: a ring of slot indices.
  uint32_t* queue_ = nullptr;
  size_t queue_head_ = 0;
  size_t queue_count_ = 0;
  uint64_t rng_ = 0;
  SpinLock lock_;
  std::atomic<uint64_t> placed_{0};
  std::atomic<uint64_t> pool_full_{0};
};

}  // namespace memtrack::core
