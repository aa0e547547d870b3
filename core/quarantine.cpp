#include "core/quarantine.h"

#include "core/sys_linux.h"

namespace memtrack::core {

bool Quarantine::init(size_t capacity, size_t budget_bytes) {
  if (capacity == 0 || capacity > SIZE_MAX / sizeof(Entry)) return false;
  // Address space only: the ring's pages are touched as it fills.
  void* ring = sys::reserve_pages(capacity * sizeof(Entry));
  if (ring == nullptr) return false;
  ring_ = static_cast<Entry*>(ring);
  capacity_ = capacity;
  budget_ = budget_bytes;
  return true;
}

bool Quarantine::pop_locked(Entry* out) {
  if (count_ == 0) return false;
  *out = ring_[head_];
  head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
  --count_;
  bytes_ -= out->bytes;
  // An empty ring starts again at its first entry: a small budget keeps to a few of the
  // ring's pages instead of walking all of them.
  if (count_ == 0) head_ = 0;
  prefetch_ahead();
  return true;
}

void Quarantine::prefetch_ahead() const {
  // The blocks leave in the order they came, long after their memory left the caches: the
  // checker's reads of the block kPrefetchAhead places behind this one start now, so that
  // they are in the cache when it leaves (the ring's own entries are read in order, which
  // the hardware prefetches).
  if (count_ <= kPrefetchAhead) return;
  size_t at = head_ + kPrefetchAhead;
  if (at >= capacity_) at -= capacity_;
  const Entry& next = ring_[at];
  size_t lines = next.bytes < kPrefetchBytes ? next.bytes : kPrefetchBytes;
  for (size_t offset = 0; offset < lines; offset += kCacheLine) {
    __builtin_prefetch(reinterpret_cast<const void*>(next.chunk + offset));
  }
}

size_t Quarantine::push_taking_over(const Entry& e, Entry* out, size_t max, bool* pushed) {
  *pushed = false;
  if (ring_ == nullptr) return 0;
  SpinLockGuard guard(lock_);
  size_t taken = 0;
  while (taken < max && count_ > 0 && (bytes_ > budget_ || count_ == capacity_)) {
    pop_locked(&out[taken++]);
  }
  if (count_ == capacity_) return taken;
  size_t tail = head_ + count_;
  if (tail >= capacity_) tail -= capacity_;
  ring_[tail] = e;
  ++count_;
  bytes_ += e.bytes;
  *pushed = true;
  return taken;
}

bool Quarantine::pop(Entry* out) {
  if (ring_ == nullptr) return false;
  SpinLockGuard guard(lock_);
  return pop_locked(out);
}

size_t Quarantine::count() const {
  SpinLockGuard guard(lock_);
  return count_;
}

size_t Quarantine::bytes() const {
  SpinLockGuard guard(lock_);
  return bytes_;
}

void Quarantine::test_only_release() {
  if (ring_ != nullptr) sys::unmap_pages(ring_, capacity_ * sizeof(Entry));
  ring_ = nullptr;
  capacity_ = budget_ = head_ = count_ = bytes_ = 0;
}

}  // namespace memtrack::core
