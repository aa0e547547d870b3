// The allocation hooks under names of the runtime's own (hidden, never exported), defined as
// aliases of the hooks in malloc_hooks.cpp and new_delete_hooks.cpp. The entry points of other
// allocators (foreign_hooks.cpp) call these rather than the exported names: a call by an
// exported name goes through the PLT, which in libmemtrack_attach.so (loaded after the
// program, never first in the lookup order) leads to the real allocator. Called in tail
// position, a hook sees the program's call site as its caller, as if the program had called it.
// Runtime-safe: declarations only.
#pragma once

#include <cstddef>

namespace memtrack::rt::hook {

void* malloc(size_t size);
void* calloc(size_t count, size_t size);
void* realloc(void* ptr, size_t size);
void free(void* ptr);
void* aligned_alloc(size_t alignment, size_t size);
size_t malloc_usable_size(void* ptr);

}  // namespace memtrack::rt::hook
