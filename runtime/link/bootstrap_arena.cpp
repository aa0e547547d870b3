// A static bump arena for the few allocations made before the real allocator is resolved
// (dlsym can call calloc). Runtime-safe: no libc. Blocks are never reused; free ignores them.
#include "runtime/link/bootstrap_arena.h"

#include <atomic>

#include "core/text_buffer.h"
#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

constexpr size_t kArenaSize = 64 * 1024;
alignas(64) char g_arena[kArenaSize];
std::atomic<size_t> g_arena_used{0};

// Each block is preceded by a 16-byte header holding its size, so malloc_usable_size and
// realloc work on bootstrap blocks.
struct alignas(16) BlockHeader {
  size_t size;
  size_t padding;
};

}  // namespace

void* bootstrap_alloc(size_t size, size_t alignment) {
  if (alignment < alignof(BlockHeader)) alignment = alignof(BlockHeader);
  size_t used = g_arena_used.load(std::memory_order_relaxed);
  for (;;) {
    size_t start = (used + sizeof(BlockHeader) + alignment - 1) & ~(alignment - 1);
    size_t end = start + size;
    if (end > kArenaSize || end < start) {
      static const char kMessage[] = "memtrack: bootstrap arena exhausted\n";
      core::sys::write_all(2, kMessage, sizeof(kMessage) - 1);
      return nullptr;
    }
    if (g_arena_used.compare_exchange_weak(used, end, std::memory_order_relaxed)) {
      auto* header = reinterpret_cast<BlockHeader*>(g_arena + start - sizeof(BlockHeader));
      header->size = size;
      return g_arena + start;  // static storage is zeroed and never reused: calloc-ready
    }
  }
}

bool bootstrap_owns(const void* ptr) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  auto base = reinterpret_cast<uintptr_t>(g_arena);
  return p >= base && p < base + kArenaSize;
}

size_t bootstrap_size(const void* ptr) {
  return reinterpret_cast<const BlockHeader*>(ptr)[-1].size;
}

}  // namespace memtrack::rt
