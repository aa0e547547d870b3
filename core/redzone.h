// How a block of --check-heap=full lies in its chunk of memory (docs/heap-errors.md): a
// header, then bytes of a known pattern before and after the block (its redzones), so a write
// just outside it is found when the block is freed or at exit; after the free the block's own
// bytes hold another pattern, so a write to it while it waits in the quarantine is found when
// it leaves. Runtime-safe: no allocation, no libc.
//
//   | header | edge pattern | block of `size` bytes | edge pattern, to the chunk's end |
//   chunk                  ptr - ...               ptr                      chunk + chunk_bytes
//
// The header is at the chunk's start, so that an underflow reaches the pattern first; the
// block starts max(kFrontMin, alignment) bytes into the chunk (a chunk aligned to the block's
// alignment keeps it aligned).
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::core::redzone {

struct Header {
  uint64_t size;         // the block's, as the program asked
  uint32_t alloc_stack;  // 0 until the allocation is recorded
  uint32_t free_stack;   // 0 while live
};
static_assert(sizeof(Header) == 16);

inline constexpr size_t kFrontMin = 32;  // the header and at least 16 bytes of pattern
inline constexpr size_t kRearMin = 16;
inline constexpr uint8_t kEdgeByte = 0xfa;
inline constexpr uint8_t kFreedByte = 0xfd;

// Bytes from the chunk's start to the block's.
inline size_t front(size_t alignment) {
  return alignment > kFrontMin ? alignment : kFrontMin;
}
// The chunk a block of `size` bytes at `alignment` (0: malloc's) needs, or 0 if that
// overflows.
inline size_t chunk_bytes(size_t size, size_t alignment) {
  size_t extra = front(alignment) + kRearMin;
  return size > SIZE_MAX - extra ? 0 : size + extra;
}
inline Header* header(uintptr_t chunk) {
  return reinterpret_cast<Header*>(chunk);
}

// Lays out a block of `size` bytes in [chunk, chunk + chunk_size) (chunk_size at least
// chunk_bytes(size, alignment)): writes the header and the patterns. Returns the block's
// address. The block's own bytes are left as they are.
uintptr_t place(uintptr_t chunk, size_t chunk_size, size_t size, size_t alignment);

// True if `ptr` may be the block of this chunk: the header's size fits between the front and
// the rear minimum (a header an underflow overwrote may not).
bool fits(uintptr_t chunk, size_t chunk_size, uintptr_t ptr);

// The changed edge byte nearest the block (after it first, then before it), or 0 if the
// patterns are whole. `ptr`'s block must fit.
uintptr_t first_changed_edge(uintptr_t chunk, size_t chunk_size, uintptr_t ptr);

// After the free: the block's bytes get the freed pattern; first_changed_freed finds the first
// that changed since (0: none).
void fill_freed(uintptr_t ptr, size_t size);
uintptr_t first_changed_freed(uintptr_t ptr, size_t size);

}  // namespace memtrack::core::redzone
