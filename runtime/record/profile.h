// Heap profile recording (profile option; docs/runtime.md, "The heap profile"): one binary
// record per allocation, free and realloc of the program, with its size, stack id, time,
// thread and a process-wide sequence number, plus every stack the first time it is used and
// RSS samples taken by memtrack's thread. Each thread varint-encodes its records into a
// batch in its own mmap'd buffer, appended to the raw file when full, when memtrack's thread
// finds it old, before exec and at exit; the CLI merges the batches by sequence number and
// packs them into a compressed, indexed file while the program runs (core/profile_format.h).
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

// The events. Call inside the runtime scope, only when profiling(). A stack's frames are
// written, from the stack depot, with the first event that names it. Never inlined: the hot
// allocation and free paths of a run without a profile would otherwise carry their code, its
// registers and its stack frame.
__attribute__((noinline)) void profile_alloc(uintptr_t ptr, uint64_t size, uint32_t stack_id);
__attribute__((noinline)) void profile_free(uintptr_t ptr);
// An RSS sample, taken by memtrack's thread every profile_interval_ms.
void profile_sample();
// Appends an opaque record (tag kModules) written by the output layer. Thread safe.
void profile_append_modules(const uint8_t* payload, size_t size);

// Called by memtrack's thread every profile_interval_ms: writes every batch that has been
// open for that long (its thread records slowly or is not running).
void profile_flush_idle();

// Appends what is buffered to the file. `final`: the process ends; a kEnd record is added
// and every later record is written at once. Both may be reached from a signal handler that
// interrupted this thread inside the runtime: then the lock is only tried.
void profile_flush();
// Before an exec: writes every thread's batch and marks the file (kExec), so that the profile
// of the image an exec replaces is known to be whole. After an exec that returned:
// profile_exec_failed() marks that the process goes on (kExecFailed).
void profile_before_exec();
void profile_exec_failed();
void profile_flush_final();

// fork(): the caller's batch is written before the fork; the child resets every buffer and
// restarts with its own file (profile_start), the stacks written again as it uses them.
void profile_fork_prepare();
void profile_fork_parent();
void profile_fork_child_reset();

}  // namespace memtrack::rt
