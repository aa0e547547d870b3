// The entry points of other allocators that a program may call by their own names: jemalloc's
// *allocx functions (jemalloc.h) and mimalloc's mi_* functions (mimalloc.h) whose arguments or
// work differ from the standard ones (those with the same, and tcmalloc's tc_* names, are
// aliases of the standard hooks: malloc_hooks.cpp, new_delete_hooks.cpp). Each does its work
// through the standard hooks (hook_aliases.h), so its blocks are recorded, sampled and freed
// like malloc's, from memtrack's heap where it serves them; where that is the whole work the
// hook is called in tail position and takes the program's call site for its own. A block
// never reaches an allocator that did not make it: jemalloc's dallocx, sallocx or rallocx of a
// block from memtrack's heap would read memory jemalloc does not own.
// Runtime-safe: nothing here allocates but through the hooks.
#include <errno.h>
#include <string.h>

#include "runtime/hooks/export.h"
#include "runtime/hooks/hook_aliases.h"
#include "runtime/hooks/program_heap.h"
#include "runtime/link/real_functions.h"
#include "runtime/output/blind_spots.h"

namespace hook = memtrack::rt::hook;
namespace rt = memtrack::rt;

namespace {

// jemalloc's flags (jemalloc.h, MALLOCX_*): the base-2 logarithm of the alignment in bits
// 0-5, zeroed memory in bit 6, an explicit thread cache in bits 8-19 and an arena from bit 20.
constexpr int kLgAlignMask = 0x3f;
constexpr int kZero = 0x40;
constexpr int kCacheOrArena = ~0xff;

// The alignment the flags ask for; 0 for malloc's own (16 bytes and below).
size_t alignment_of(int flags) {
  int lg = flags & kLgAlignMask;
  return lg > 4 ? size_t{1} << lg : 0;
}

// `size` bytes at `alignment` (0: malloc's), zeroed: the hooks' allocation, then the
// memset; the hook's caller is this runtime code, which the stack capture leaves out.
__attribute__((noinline)) void* zeroed(size_t size, size_t alignment) {
  if (alignment == 0) return hook::calloc(1, size);
  void* p = hook::aligned_alloc(alignment, size);
  if (p != nullptr) memset(p, 0, size);
  return p;
}

// A new block of `size` bytes at `alignment`, the old one's bytes copied into it (and the
// bytes past them zeroed with `zero`), the old one freed: what realloc does when it moves.
// nullptr, with the old block untouched, if the new one cannot be had.
__attribute__((noinline)) void* moved(void* ptr, size_t size, size_t alignment, bool zero) {
  size_t old_size = ptr != nullptr ? hook::malloc_usable_size(ptr) : 0;
  void* fresh = alignment != 0 ? hook::aligned_alloc(alignment, size) : hook::malloc(size);
  if (fresh == nullptr) return nullptr;
  size_t kept = old_size < size ? old_size : size;
  if (kept > 0) memcpy(fresh, ptr, kept);
  if (zero && size > kept) memset(static_cast<char*>(fresh) + kept, 0, size - kept);
  if (ptr != nullptr) hook::free(ptr);
  return fresh;
}

// The overflow check of mimalloc's *n functions: count * size, or false.
bool product(size_t count, size_t size, size_t* total) {
  if (__builtin_mul_overflow(count, size, total)) {
    errno = ENOMEM;
    return false;
  }
  return true;
}

__attribute__((noinline)) char* copy_string(const char* s, size_t n) {
  auto* p = static_cast<char*>(hook::malloc(n + 1));
  if (p != nullptr) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

}  // namespace

// --- jemalloc ---------------------------------------------------------------------------------
// A thread cache or an arena chosen in the flags concerns jemalloc's own lists: the block is
// served as without them (from memtrack's heap where it can), and jemalloc frees it through
// free() as it frees any block of its own.

MEMTRACK_EXPORT_C void* mallocx(size_t size, int flags) {
  size_t alignment = alignment_of(flags);
  if ((flags & kZero) != 0) return zeroed(size, alignment);
  if (alignment == 0) return hook::malloc(size);
  return hook::aligned_alloc(alignment, size);
}

MEMTRACK_EXPORT_C void* rallocx(void* ptr, size_t size, int flags) {
  size_t alignment = alignment_of(flags);
  if (alignment == 0 && (flags & kZero) == 0) return hook::realloc(ptr, size);
  return moved(ptr, size, alignment, (flags & kZero) != 0);
}

// The block is never resized in place: its real size, which jemalloc's contract allows when
// the resize cannot be made (the caller then moves it with rallocx).
MEMTRACK_EXPORT_C size_t xallocx(void* ptr, size_t /*size*/, size_t /*extra*/, int /*flags*/) {
  return hook::malloc_usable_size(ptr);
}

MEMTRACK_EXPORT_C size_t sallocx(void* ptr, int /*flags*/) {
  return hook::malloc_usable_size(ptr);
}

MEMTRACK_EXPORT_C void dallocx(void* ptr, int /*flags*/) {
  hook::free(ptr);
}

MEMTRACK_EXPORT_C void sdallocx(void* ptr, size_t /*size*/, int /*flags*/) {
  hook::free(ptr);
}

// The real size mallocx(size, flags) would give: memtrack's heap's class where the heap serves
// the block, jemalloc's answer (or the size itself) where jemalloc does.
MEMTRACK_EXPORT_C size_t nallocx(size_t size, int flags) {
  size_t alignment = alignment_of(flags);
  size_t served = rt::heap_chunk_size(size, alignment);
  if (served != 0) return served;
  auto real = rt::g_lazy_real.nallocx.get();
  if (real != nullptr) return real(size, flags & ~kCacheOrArena);
  return size == 0 ? 1 : size;
}

// --- mimalloc ---------------------------------------------------------------------------------
// Its heaps (mi_heap_*) are not interposed: what a program allocates there is not seen. A
// program that makes one is told so in its report (blind_spots.h): the heaps' own functions,
// mi_heap_destroy included, stay mimalloc's.

MEMTRACK_EXPORT_C void* mi_heap_new() {
  rt::note_mimalloc_heap();
  auto real = rt::g_lazy_real.mi_heap_new.get();
  return real != nullptr ? real() : nullptr;
}

MEMTRACK_EXPORT_C void* mi_heap_new_in_arena(int arena_id) {
  rt::note_mimalloc_heap();
  auto real = rt::g_lazy_real.mi_heap_new_in_arena.get();
  return real != nullptr ? real(arena_id) : nullptr;
}

MEMTRACK_EXPORT_C void* mi_zalloc(size_t size) {
  return hook::calloc(1, size);
}
MEMTRACK_EXPORT_C void* mi_zalloc_small(size_t size) {
  return hook::calloc(1, size);
}
MEMTRACK_EXPORT_C void* mi_mallocn(size_t count, size_t size) {
  size_t total = 0;
  if (!product(count, size, &total)) return nullptr;
  return hook::malloc(total);
}
MEMTRACK_EXPORT_C void* mi_reallocn(void* ptr, size_t count, size_t size) {
  size_t total = 0;
  if (!product(count, size, &total)) return nullptr;
  return hook::realloc(ptr, total);
}
// realloc that frees the block when it fails.
MEMTRACK_EXPORT_C void* mi_reallocf(void* ptr, size_t size) {
  void* p = hook::realloc(ptr, size);
  if (p == nullptr && size != 0) hook::free(ptr);
  return p;
}
// In place or not at all: a block grows no further than its chunk.
MEMTRACK_EXPORT_C void* mi_expand(void* ptr, size_t size) {
  return ptr != nullptr && size <= hook::malloc_usable_size(ptr) ? ptr : nullptr;
}
MEMTRACK_EXPORT_C void* mi_malloc_aligned(size_t size, size_t alignment) {
  return hook::aligned_alloc(alignment, size);
}
MEMTRACK_EXPORT_C void* mi_zalloc_aligned(size_t size, size_t alignment) {
  return zeroed(size, alignment);
}
MEMTRACK_EXPORT_C void* mi_calloc_aligned(size_t count, size_t size, size_t alignment) {
  size_t total = 0;
  if (!product(count, size, &total)) return nullptr;
  return zeroed(total, alignment);
}
MEMTRACK_EXPORT_C void* mi_realloc_aligned(void* ptr, size_t size, size_t alignment) {
  if (alignment <= 16) return hook::realloc(ptr, size);
  return moved(ptr, size, alignment, false);
}
MEMTRACK_EXPORT_C void mi_free_size(void* ptr, size_t /*size*/) {
  hook::free(ptr);
}
MEMTRACK_EXPORT_C void mi_free_aligned(void* ptr, size_t /*alignment*/) {
  hook::free(ptr);
}
MEMTRACK_EXPORT_C void mi_free_size_aligned(void* ptr, size_t /*size*/, size_t /*alignment*/) {
  hook::free(ptr);
}
MEMTRACK_EXPORT_C char* mi_strdup(const char* s) {
  return copy_string(s, strlen(s));
}
MEMTRACK_EXPORT_C char* mi_strndup(const char* s, size_t n) {
  return copy_string(s, strnlen(s, n));
}
