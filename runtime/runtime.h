// Shared state and entry points of libmemtrack.so, the preload runtime.
// Runtime-safe: nothing declared here allocates through malloc or throws.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/alloc_table.h"
#include "core/flags.h"
#include "core/stack_depot.h"
#include "core/text_buffer.h"

namespace memtrack::rt {

// Process-wide counters that the allocation table does not keep itself (see
// core::AllocTotals). Relaxed atomics; none is touched on the common allocation path.
struct Stats {
  std::atomic<uint64_t> peak_live_bytes{0};
  std::atomic<int64_t> published_live_bytes{0};    // the threads' published net changes
  std::atomic<uint64_t> untracked_allocations{0};  // could not be recorded (out of memory)
  std::atomic<uint64_t> untracked_bytes{0};
};

// The counters as the reports show them.
struct StatsSnapshot {
  uint64_t allocations;      // tracked and untracked
  uint64_t frees;            // of tracked blocks
  uint64_t bytes_allocated;  // tracked and untracked
  uint64_t live_bytes;       // tracked blocks not freed
  uint64_t peak_live_bytes;  // see peak.cpp for its precision
  uint64_t untracked_allocations;
  uint64_t untracked_bytes;
};
StatsSnapshot snapshot_stats();

// Adds `delta` bytes to the calling thread's net change of live bytes, publishing it (and a
// peak candidate) once it passes a threshold. Called by the allocation and free paths.
void note_live_bytes(int64_t delta);
// Creates the thread-exit hook that publishes a thread's last change. Called once at init.
void init_peak_tracking();

extern core::Flags g_flags;
extern core::AllocTable g_allocs;
extern core::StackDepot g_stacks;
extern Stats g_stats;

// True while the calling thread is inside the runtime. Allocation calls made meanwhile (by
// the unwinder, dlsym, the real operator new, ...) go straight to the real allocator and are
// not recorded. Initial-exec TLS: no allocation, no __tls_get_addr call.
extern __thread int t_in_runtime;

class RuntimeScope {
 public:
  RuntimeScope() { ++t_in_runtime; }
  ~RuntimeScope() { --t_in_runtime; }
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;
};

inline bool in_runtime() {
  return t_in_runtime != 0;
}

// The allocator functions the runtime forwards to, resolved with dlsym(RTLD_NEXT).
struct RealFunctions {
  void* (*malloc)(size_t);
  void (*free)(void*);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  size_t (*malloc_usable_size)(void*);
  void (*exit_now)(int);        // _exit
  void (*exit_now_upper)(int);  // _Exit
  void (*exit_process)(int);    // exit
  int (*start_main)(int (*)(int, char**, char**), int, char**, void (*)(), void (*)(), void (*)(),
                    void*);  // __libc_start_main
  int (*dlclose)(void*);
};
extern RealFunctions g_real;

// Makes sure the real functions are resolved and the options parsed. Returns false only on
// the thread that is doing the initialisation (dlsym may call calloc): that caller must serve
// the request from the bootstrap arena. Thread safe.
bool ensure_initialized();
inline bool initialized() {
  extern std::atomic<int> g_init_state;
  return g_init_state.load(std::memory_order_acquire) == 2;
}

// pid of this process image, updated in the fork child handler. A differing getpid() means
// a vfork child that shares our memory.
extern std::atomic<int> g_pid;

// Records a new block / forgets a freed one. Must be called with the calling thread outside
// the runtime (in_runtime() false); they enter it themselves. Keep errno unchanged.
void record_allocation(void* ptr, size_t size, core::AllocFamily family, bool aligned);
// Returns true and fills *out if `ptr` was a tracked block.
bool record_free(void* ptr, core::AllocRecord* out);
// Puts a record back (used when realloc fails after its old record was removed).
void restore_record(const core::AllocRecord& rec);

// Captures the calling thread's stack, without the runtime's own frames, into `frames`.
// Returns the number of frames stored (at most `max`) and sets *hash to
// StackDepot::hash_frames of them. Never takes a runtime lock.
int capture_stack(uintptr_t* frames, int max, uint64_t* /*out*/ hash);
void init_unwinder();
// check_unwinder: prints how many fast stacks differed from libgcc's. Called once at exit.
void report_unwinder_check();
// True if `pc` lies in libmemtrack.so itself.
bool is_runtime_address(uintptr_t pc);

// Appends `pattern` to `path` with %p expanded to the pid and "%%" to '%' (log_file,
// trace_log).
void expand_log_path(const char* pattern, core::TextBuffer& path);

// Diagnostics: writes "memtrack[pid]: <message>\n" to stderr with write(2).
void diag(const char* message);
void warn_once(std::atomic<bool>& flag, const char* message);

// Installs the report-on-signal handlers (report_on_signal option). Called once.
void install_signal_report();

// Produces the exit report once per process. `how` says what ended the program.
void report_at_exit(const char* how, int status, bool have_status);

// Bootstrap arena for the allocations dlsym makes before the real malloc is known.
void* bootstrap_alloc(size_t size, size_t alignment);
bool bootstrap_owns(const void* ptr);
size_t bootstrap_size(const void* ptr);

}  // namespace memtrack::rt
