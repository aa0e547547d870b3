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
  return true;
}

bool Quarantine::pop_if_over(Entry* out) {
  if (ring_ == nullptr) return false;
  SpinLockGuard guard(lock_);
  if (bytes_ <= budget_ && count_ < capacity_) return false;
  return pop_locked(out);
}

bool Quarantine::push(const Entry& e) {
  if (ring_ == nullptr) return false;
  SpinLockGuard guard(lock_);
  if (count_ == capacity_) return false;
  size_t tail = head_ + count_;
  if (tail >= capacity_) tail -= capacity_;
  ring_[tail] = e;
  ++count_;
  bytes_ += e.bytes;
  return true;
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
