// Heap profile recording (profile option; docs/runtime.md, "The heap profile"): one binary
// record per allocation, free and realloc of the program, with its size, stack id, time and
// thread, plus every stack the first time it is used and RSS samples taken by memtrack's
// thread. Records are varint-encoded into one mmap'd buffer under a spin lock and appended
// to the raw file when the buffer is full, before fork and exec, and at exit; the CLI packs
// the raw file into a compressed, indexed one afterwards (core/profile_format.h).
// Runtime-safe: no malloc; calls libc (open, write, close, read) only through core::sys.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace memtrack::rt {

extern std::atomic<bool> g_profile_on;

inline bool profiling() {
  return g_profile_on.load(std::memory_order_relaxed);
}

// Starts recording into `path` (created; must not exist yet): maps the buffer and writes the
// raw header. Returns false (recording stays off) if memory cannot be mapped or the file
// cannot be created. Called at start-up, and in a forked child with the child's own file.
[[nodiscard]] bool profile_start(const char* path);

// The calling thread is inside realloc: the free of its old block is recorded as the first
// half of a realloc. One per call, on the stack of the realloc hook.
class ProfileReallocScope {
 public:
  ProfileReallocScope();
  ~ProfileReallocScope();
  ProfileReallocScope(const ProfileReallocScope&) = delete;
  ProfileReallocScope& operator=(const ProfileReallocScope&) = delete;
};

// The events. Call inside the runtime scope, only when profiling(). `frames` may be null
// when the stack was recorded before (a failed realloc putting its old block back).
void profile_alloc(uintptr_t ptr, uint64_t size, uint32_t stack_id, const uintptr_t* frames,
                   uint32_t depth);
void profile_free(uintptr_t ptr);
// An RSS sample, taken by memtrack's thread every profile_interval_ms.
void profile_sample();
// Appends an opaque record (tag kModules) written by the output layer. Thread safe.
void profile_append_modules(const uint8_t* payload, size_t size);

// Appends what is buffered to the file. `final`: the process ends; a kEnd record is added
// and every later record is written at once. Both may be reached from a signal handler that
// interrupted this thread inside the runtime: then the lock is only tried.
void profile_flush();
void profile_flush_final();

// fork(): the buffer is written before the fork and the lock held across it; the child
// restarts with its own file (profile_start) and the stacks written again as it uses them.
void profile_fork_prepare();
void profile_fork_parent();
void profile_fork_child_reset();

}  // namespace memtrack::rt
