#include "core/redzone.h"

#include "core/byte_pattern.h"

namespace memtrack::core::redzone {

uintptr_t place(uintptr_t chunk, size_t chunk_size, size_t size, size_t alignment) {
  uintptr_t ptr = chunk + front(alignment);
  *header(chunk) = {size, 0, 0};
  fill_pattern(chunk + sizeof(Header), ptr, kEdgeByte);
  fill_pattern(ptr + size, chunk + chunk_size, kEdgeByte);
  return ptr;
}

bool fits(uintptr_t chunk, size_t chunk_size, uintptr_t ptr) {
  if (ptr < chunk + kFrontMin || ptr >= chunk + chunk_size) return false;
  // The block starts kFrontMin or its alignment (a power of two) into the chunk.
  size_t offset = ptr - chunk;
  if (offset != kFrontMin && ((offset & (offset - 1)) != 0 || (ptr & (offset - 1)) != 0)) {
    return false;
  }
  uint64_t size = header(chunk)->size;
  return size <= chunk + chunk_size - kRearMin - ptr;
}

uintptr_t first_changed_edge(uintptr_t chunk, size_t chunk_size, uintptr_t ptr) {
  uintptr_t end = ptr + header(chunk)->size;
  if (uintptr_t after = first_not_pattern(end, chunk + chunk_size, kEdgeByte)) return after;
  return last_not_pattern(chunk + sizeof(Header), ptr, kEdgeByte);
}

void fill_freed(uintptr_t ptr, size_t size) {
  fill_pattern(ptr, ptr + size, kFreedByte);
}

uintptr_t first_changed_freed(uintptr_t ptr, size_t size) {
  return first_not_pattern(ptr, ptr + size, kFreedByte);
}

}  // namespace memtrack::core::redzone
