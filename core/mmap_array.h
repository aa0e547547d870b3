// A growable array backed by mmap, for the runtime's temporary working sets (report grouping).
// Runtime-safe: never calls malloc. Only for trivially copyable element types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/sys_linux.h"
#include "core/text_buffer.h"

namespace memtrack::core {

// Not thread safe.
template <typename T>
class MmapArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  MmapArray() = default;
  ~MmapArray() { sys::unmap_pages(data_, capacity_ * sizeof(T)); }
  MmapArray(const MmapArray&) = delete;
  MmapArray& operator=(const MmapArray&) = delete;
  // Takes `other`'s memory (which is left empty): a phase can hand its array on to the next.
  MmapArray& operator=(MmapArray&& other) noexcept {
    if (this != &other) {
      sys::unmap_pages(data_, capacity_ * sizeof(T));
      data_ = other.data_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.data_ = nullptr;
      other.size_ = 0;
      other.capacity_ = 0;
    }
    return *this;
  }

  // Returns false if memory cannot be mapped; the array is then unchanged.
  [[nodiscard]] bool try_reserve(size_t capacity) {
    if (capacity <= capacity_) return true;
    auto* bigger = static_cast<T*>(sys::map_pages(capacity * sizeof(T)));
    if (bigger == nullptr) return false;
    copy_bytes(bigger, data_, size_ * sizeof(T));
    sys::unmap_pages(data_, capacity_ * sizeof(T));
    data_ = bigger;
    capacity_ = capacity;
    return true;
  }

  [[nodiscard]] bool try_push_back(const T& value) {
    if (size_ == capacity_ && !try_reserve(capacity_ < 256 ? 256 : capacity_ * 2)) return false;
    data_[size_++] = value;
    return true;
  }

  // Sets the size; new elements are whatever the memory holds (zero when freshly mapped).
  [[nodiscard]] bool try_resize(size_t size) {
    if (!try_reserve(size)) return false;
    size_ = size;
    return true;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Binary search in an array sorted by key(item): the index of the first item whose key is
// greater than `value` (n if none). The item before it, if any, is the last with key <= value.
template <typename T, typename Key>
size_t first_after(const T* items, size_t n, uint64_t value, Key key) {
  size_t lo = 0;
  size_t hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (key(items[mid]) <= value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// In-place heap sort: O(n log n), no recursion, no allocation. `less(a, b)` orders elements.
template <typename T, typename Less>
void heap_sort(T* items, size_t n, Less less) {
  auto sift_down = [&](size_t root, size_t end) {
    while (2 * root + 1 < end) {
      size_t child = 2 * root + 1;
      if (child + 1 < end && less(items[child], items[child + 1])) ++child;
      if (!less(items[root], items[child])) return;
      T tmp = items[root];
      items[root] = items[child];
      items[child] = tmp;
      root = child;
    }
  };
  for (size_t i = n / 2; i-- > 0;) sift_down(i, n);
  for (size_t end = n; end > 1; --end) {
    T tmp = items[0];
    items[0] = items[end - 1];
    items[end - 1] = tmp;
    sift_down(0, end - 1);
  }
}

}  // namespace memtrack::core
