// Metadata memory accounting. Runtime-safe: lock-free, mmap only.
#include "core/metadata_budget.h"

#include <atomic>

#include "core/sys_linux.h"

namespace memtrack::core {
namespace {
std::atomic<size_t> g_limit{0};
std::atomic<size_t> g_used{0};
}  // namespace

void set_metadata_limit(size_t bytes) {
  g_limit.store(bytes, std::memory_order_relaxed);
}

bool try_charge_metadata(size_t bytes) {
  size_t limit = g_limit.load(std::memory_order_relaxed);
  size_t used = g_used.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (limit != 0 && used > limit) {
    g_used.fetch_sub(bytes, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void* map_metadata(size_t bytes) {
  if (!try_charge_metadata(bytes)) return nullptr;
  void* mem = sys::map_pages(bytes);
  if (mem == nullptr) g_used.fetch_sub(bytes, std::memory_order_relaxed);
  return mem;
}

void unmap_metadata(void* addr, size_t bytes) {
  if (addr == nullptr) return;
  sys::unmap_pages(addr, bytes);
  g_used.fetch_sub(bytes, std::memory_order_relaxed);
}

size_t metadata_bytes() {
  return g_used.load(std::memory_order_relaxed);
}

}  // namespace memtrack::core
