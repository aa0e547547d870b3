// Thin, non-allocating wrappers over the Linux system calls the runtime needs.
// Runtime-safe: no malloc, no locks, async-signal-safe unless stated otherwise.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace memtrack::core::sys {

// Maps `bytes` (rounded up to whole pages) of zeroed, private, read-write memory.
// Returns nullptr on failure; never calls malloc.
void* map_pages(size_t bytes);

// Like map_pages, but only reserves address space (MAP_NORESERVE): for large tables indexed by
// a number (file descriptors) whose pages are touched only where they are used.
void* reserve_pages(size_t bytes);

// Reserves `bytes` of address space, aligned to `alignment` (a power of two, at least a
// page), with no access and no memory behind it (PROT_NONE, MAP_NORESERVE): an inaccessible
// mapping is left out of core dumps and counts against no overcommit limit. Parts of it are
// made usable with commit_pages. Returns nullptr on failure. Registered like map_pages.
void* reserve_address_space(size_t bytes, size_t alignment);

// Leaves [addr, addr + bytes) (page-aligned) out of core dumps: memtrack's own bookkeeping,
// of no use to someone debugging the program. Best effort.
void exclude_from_core_dump(void* addr, size_t bytes);

// Makes [addr, addr + bytes) of a reservation readable and writable (page-aligned `addr`,
// `bytes` rounded up to pages). Returns false on failure (out of memory, a mapping limit).
bool commit_pages(void* addr, size_t bytes);
// Makes [addr, addr + bytes) (page-aligned) inaccessible again (PROT_NONE); its memory stays.
// Returns false on failure. Async-signal-safe.
bool protect_pages(void* addr, size_t bytes);

// Gives the memory behind [addr, addr + bytes) (page-aligned) back to the system; the range
// stays mapped and reads as zero when next touched (MADV_DONTNEED). Returns false on failure.
bool release_pages(void* addr, size_t bytes);

// Releases memory obtained from map_pages or reserve_pages with the same `bytes`.
void unmap_pages(void* addr, size_t bytes);

// The ranges map_pages handed out and unmap_pages has not taken back: the runtime's own
// memory, which the leak scan must never treat as a root. Copies up to `max` of them,
// unsorted, into `out` and returns how many there are (more than `max` means some were not
// copied). Thread safe.
struct MemoryRange {
  uintptr_t start;
  uintptr_t end;
};
size_t own_mappings(MemoryRange* /*out*/ out, size_t max);

// Writes the whole buffer, retrying on EINTR and short writes. Returns false on error.
bool write_all(int fd, const char* data, size_t size);

// Opens `path` for writing (created with mode 0644, truncated). Returns -1 on failure.
int open_for_write(const char* path);
// Opens (creating) `path` for appending. Returns -1 on failure (errno set).
int open_for_append(const char* path);

void close_fd(int fd);

int current_pid();
int current_tid();
// The threads of this process (the entries of /proc/self/task, read with getdents64), or -1
// when /proc cannot be read.
int thread_count();

// CLOCK_MONOTONIC in nanoseconds.
uint64_t monotonic_ns();

// Gives the CPU away briefly; used by spin locks after spinning.
void yield_cpu();

size_t page_size();

// The calling thread's errno, so hooks can keep the program's errno intact. Inline: every
// allocation hook saves and restores it.
inline int get_errno() {
  return errno;
}
inline void set_errno(int value) {
  errno = value;
}

}  // namespace memtrack::core::sys
