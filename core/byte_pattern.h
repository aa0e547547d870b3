// Memory filled with one byte value, and the search for the first byte that changed: the heap
// checks' patterns beside and inside blocks (guard_pool.h, redzone.h). Plain stores and loads,
// a word at a time where aligned, through volatile pointers so that the compiler makes no call
// to memset (the runtime's code must not reach the program's) and keeps the reads the
// program's writes may have changed. Runtime-safe: no allocation, no libc.
#pragma once

#include <cstdint>

namespace memtrack::core {

inline void fill_pattern(uintptr_t from, uintptr_t to, uint8_t byte) {
  uint64_t word = 0x0101010101010101ULL * byte;
  auto* p = reinterpret_cast<volatile uint8_t*>(from);
  auto* end = reinterpret_cast<volatile uint8_t*>(to);
  while (p < end && (reinterpret_cast<uintptr_t>(p) & 7) != 0) *p++ = byte;
  while (p + 8 <= end) {
    *reinterpret_cast<volatile uint64_t*>(p) = word;
    p += 8;
  }
  while (p < end) *p++ = byte;
}

// The first byte of [from, to) that is not `byte`, or 0.
inline uintptr_t first_not_pattern(uintptr_t from, uintptr_t to, uint8_t byte) {
  uint64_t word = 0x0101010101010101ULL * byte;
  const auto* p = reinterpret_cast<const volatile uint8_t*>(from);
  const auto* end = reinterpret_cast<const volatile uint8_t*>(to);
  while (p < end && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    if (*p != byte) return reinterpret_cast<uintptr_t>(p);
    ++p;
  }
  while (p + 8 <= end && *reinterpret_cast<const volatile uint64_t*>(p) == word) p += 8;
  for (; p < end; ++p) {
    if (*p != byte) return reinterpret_cast<uintptr_t>(p);
  }
  return 0;
}

// The last byte of [from, to) that is not `byte`, or 0 (byte by byte: for short edges).
inline uintptr_t last_not_pattern(uintptr_t from, uintptr_t to, uint8_t byte) {
  const auto* p = reinterpret_cast<const volatile uint8_t*>(to);
  const auto* begin = reinterpret_cast<const volatile uint8_t*>(from);
  while (p > begin) {
    --p;
    if (*p != byte) return reinterpret_cast<uintptr_t>(p);
  }
  return 0;
}

}  // namespace memtrack::core
