// The freed blocks of --check-heap=full held back before their memory is reused
// (docs/heap-errors.md): a first-in first-out ring of up to `capacity` blocks and, beyond a
// budget of bytes, the oldest leave. A block waits filled with a pattern (redzone.h); the
// caller checks it when it leaves, so a write after its free is found then, with the stacks
// the block's header keeps. Thread safe (one lock, held for a few stores, never across a
// call out). Runtime-safe: the ring is mmap'd memory, no libc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/spin_lock.h"

namespace memtrack::core {

class Quarantine {
 public:
  struct Entry {
    uintptr_t ptr = 0;    // the block
    uintptr_t chunk = 0;  // the memory it lies in, to give back when it leaves
    size_t bytes = 0;     // the chunk's size: what the budget counts
  };

  // Maps the ring for `capacity` entries (at least 1). False if it cannot be mapped: the
  // quarantine stays off (push refuses every block). Not thread safe: once, at start-up.
  bool init(size_t capacity, size_t budget_bytes);
  bool enabled() const { return ring_ != nullptr; }

  // A free's whole turn under one lock: takes out, oldest first, up to `max` entries into
  // `out` while the ring is over its budget of bytes or full, then adds `e` at the back.
  // Returns how many were taken; *pushed is false if `e` found no room (more than `max` had
  // to leave, or the quarantine is off): the caller then lets it leave at once.
  size_t push_taking_over(const Entry& e, Entry* /*out*/ out, size_t max, bool* /*out*/ pushed);
  // Takes the oldest entry out, whatever the budget (the exit's check); false when empty.
  bool pop(Entry* /*out*/ out);

  size_t count() const;
  size_t bytes() const;
  size_t budget() const { return budget_; }  // set at init, never changed

  // fork(): the forking thread holds the lock across it, so the child's ring is whole.
  void lock() { lock_.lock(); }
  void unlock() { lock_.unlock(); }
  void reset_after_fork() { lock_.reset_after_fork(); }

  // Unmaps the ring (tests).
  void test_only_release();

 private:
  bool pop_locked(Entry* out);
  void prefetch_ahead() const;

  static constexpr size_t kPrefetchAhead = 4;
  static constexpr size_t kPrefetchBytes = 256;  // of a block's chunk: its header and start
  static constexpr size_t kCacheLine = 64;

  mutable SpinLock lock_;
  Entry* ring_ = nullptr;
  size_t capacity_ = 0;
  size_t budget_ = 0;
  size_t head_ = 0;  // the oldest entry
  size_t count_ = 0;
  size_t bytes_ = 0;
};

}  // namespace memtrack::core
