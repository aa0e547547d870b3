// A static bump arena for the few allocations made before the real allocator is resolved.
// Runtime-safe: no libc.
#pragma once

#include <cstddef>

namespace memtrack::rt {

// Bootstrap arena for the allocations dlsym makes before the real malloc is known.
void* bootstrap_alloc(size_t size, size_t alignment);
bool bootstrap_owns(const void* ptr);
size_t bootstrap_size(const void* ptr);

}  // namespace memtrack::rt
