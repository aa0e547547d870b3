// The set of blocks allocated for a signal handler inside the runtime scope (forwarded.h).
// Runtime-safe: no malloc; lock-free.
#include "runtime/record/forwarded.h"

#include <atomic>
#include <cstdint>

#include "runtime/thread_state.h"

namespace memtrack::rt {
namespace {

// Open addressing with linear probes over a short window; a removed entry leaves a tombstone
// (1: no block starts at an odd address), so the probes of the others stay valid. 4,096
// slots: a program's handlers that allocate inside the runtime's few instructions, and
// free later, rarely hold more than a few blocks at once.
constexpr size_t kSlots = 4096;
constexpr size_t kProbes = 32;
constexpr uintptr_t kEmpty = 0;
constexpr uintptr_t kTombstone = 1;

std::atomic<uintptr_t> g_slots[kSlots];

size_t home_of(uintptr_t address) {
  return static_cast<size_t>(((address >> 4) * 0x9e3779b97f4a7c15ULL) >> 52);  // 12 bits
}

}  // namespace

void note_forwarded(const void* ptr) {
  if (ptr == nullptr || t_thread.allowed_allocations > 0) return;
  auto address = reinterpret_cast<uintptr_t>(ptr);
  size_t home = home_of(address);
  for (size_t i = 0; i < kProbes; ++i) {
    std::atomic<uintptr_t>& slot = g_slots[(home + i) % kSlots];
    uintptr_t seen = slot.load(std::memory_order_relaxed);
    if ((seen == kEmpty || seen == kTombstone) &&
        slot.compare_exchange_strong(seen, address, std::memory_order_release)) {
      return;
    }
  }
}

bool forget_forwarded(const void* ptr) {
  auto address = reinterpret_cast<uintptr_t>(ptr);
  if (address <= kTombstone) return false;
  size_t home = home_of(address);
  for (size_t i = 0; i < kProbes; ++i) {
    std::atomic<uintptr_t>& slot = g_slots[(home + i) % kSlots];
    uintptr_t seen = slot.load(std::memory_order_acquire);
    if (seen == kEmpty) return false;
    if (seen == address)
      return slot.compare_exchange_strong(seen, kTombstone, std::memory_order_relaxed);
  }
  return false;
}

}  // namespace memtrack::rt
