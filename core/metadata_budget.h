// A process-wide cap on the memory the runtime maps for its tracking tables (allocation
// table, stack depot), so a long-running program's overhead stays bounded.
// Runtime-safe: lock-free atomics only.
#pragma once

#include <cstddef>

namespace memtrack::core {

// Sets the cap in bytes; 0 means no cap. Thread safe.
void set_metadata_limit(size_t bytes);

// Maps `bytes` of zeroed memory for metadata if the cap allows it. Returns nullptr when the
// cap would be exceeded or mmap fails. Thread safe.
void* map_metadata(size_t bytes);

// Charges `bytes` of metadata committed some other way (memtrack's own heap commits its
// records inside a reservation) if the cap allows it. Never given back. Thread safe.
[[nodiscard]] bool try_charge_metadata(size_t bytes);

// Unmaps memory obtained from map_metadata and returns it to the budget. Thread safe.
void unmap_metadata(void* addr, size_t bytes);

// Bytes currently mapped through map_metadata.
size_t metadata_bytes();

}  // namespace memtrack::core
