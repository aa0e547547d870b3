// The regions a program registered with __lsan_register_root_region: scanned as roots by
// the leak scan (scan_root_regions). Runtime-safe: no malloc; a fixed table.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::rt {

inline constexpr size_t kMaxRootRegions = 256;

// Adds [begin, begin + size). Returns false if the table is full. Thread safe.
[[nodiscard]] bool register_root_region(uintptr_t begin, size_t size);

// Removes one registration of exactly [begin, begin + size). Returns false if there is none
// (LeakSanitizer requires the pointer and size given at registration). Thread safe.
[[nodiscard]] bool unregister_root_region(uintptr_t begin, size_t size);

// Copies the registered regions (at most `capacity`) as begin/end pairs into `out` and
// returns their number. Thread safe. The leak scan calls it while the other threads are
// stopped: only a thread inside the runtime holds the lock, and the stopper parks none.
size_t copy_root_regions(uintptr_t (*out)[2], size_t capacity);

// The child of fork has one thread: the lock is free whatever its state was.
void root_regions_reset_after_fork();

}  // namespace memtrack::rt
