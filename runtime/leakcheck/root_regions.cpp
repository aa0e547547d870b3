// The registered root regions (root_regions.h). Runtime-safe: no malloc, no libc.
#include "runtime/leakcheck/root_regions.h"

#include "core/spin_lock.h"

namespace memtrack::rt {
namespace {

struct Region {
  uintptr_t begin;
  size_t size;
};

core::SpinLock g_lock;
Region g_regions[kMaxRootRegions];  // under g_lock
size_t g_count = 0;                 // under g_lock

}  // namespace

bool register_root_region(uintptr_t begin, size_t size) {
  core::SpinLockGuard guard(g_lock);
  if (g_count == kMaxRootRegions) return false;
  g_regions[g_count++] = Region{begin, size};
  return true;
}

bool unregister_root_region(uintptr_t begin, size_t size) {
  core::SpinLockGuard guard(g_lock);
  // The latest registration first, so a region registered twice is removed once.
  for (size_t i = g_count; i-- > 0;) {
    if (g_regions[i].begin != begin || g_regions[i].size != size) continue;
    g_regions[i] = g_regions[--g_count];
    return true;
  }
  return false;
}

size_t copy_root_regions(uintptr_t (*out)[2], size_t capacity) {
  core::SpinLockGuard guard(g_lock);
  size_t n = g_count < capacity ? g_count : capacity;
  for (size_t i = 0; i < n; ++i) {
    uintptr_t end = g_regions[i].begin + g_regions[i].size;
    out[i][0] = g_regions[i].begin;
    out[i][1] = end < g_regions[i].begin ? UINTPTR_MAX : end;  // a size that wraps: to the top
  }
  return n;
}

void root_regions_reset_after_fork() {
  g_lock.reset_after_fork();
}

}  // namespace memtrack::rt
