// The event log (trace_log option): one line per allocation call (malloc, calloc, realloc,
// free, the aligned forms, operator new and delete) and per fopen, fdopen, freopen and
// fclose, made by the program, with the calling thread's id, the arguments and the result:
//
//   4711 malloc(16) = 0x55d0c8e2a2a0
//   4711 realloc(0x55d0c8e2a2a0, 32) = 0x55d0c8e2a6c0
//   4711 fopen("/tmp/x", "w") = 0x55d0c8e2a700 (fd 3)
//   4711 fclose(0x55d0c8e2a700) = 0 (fd 3)
//   4711 free(0x55d0c8e2a6c0)
//
// Lines are collected in a 64 KiB buffer under a spin lock and appended to the file when it
// is full, before fork and exec, and at exit (after which each line is written at once).
// The file is opened (O_APPEND) for each of those writes and closed again, so memtrack never
// holds a descriptor of the program's: a program that closes every descriptor it does not
// know, or counts on getting the lowest free one, behaves as without memtrack.
// Runtime-safe: no malloc; every function keeps errno.
#pragma once

#include <atomic>
#include <cstddef>

#include "runtime/runtime.h"

namespace memtrack::rt {

extern std::atomic<bool> g_trace_on;

// True if the calling code should log its event: the log is on and the call was made by the
// program (not by the runtime itself, whose allocations are never events).
inline bool tracing() {
  return g_trace_on.load(std::memory_order_relaxed) && !in_runtime();
}

// Each writes one line (see the file comment). `call` names the function as the program
// wrote it: "malloc", "new[]", "delete", ...
void trace_alloc(const char* call, size_t size, const void* result);          // f(n) = p
void trace_alloc2(const char* call, size_t a, size_t b, const void* result);  // f(a, b) = p
void trace_realloc(const void* old, size_t size, const void* result);         // realloc
void trace_posix_memalign(size_t alignment, size_t size, const void* result, int error);
void trace_new(const char* call, size_t size, size_t alignment, bool nothrow, const void* result);
void trace_free(const char* call, const void* ptr);  // f(p)
// `error` is errno after a failed call (result null), 0 otherwise; `fd` is the stream's.
void trace_fopen(const char* call, const char* path, const char* mode, const void* result, int fd,
                 int error);
void trace_fdopen(int fd, const char* mode, const void* result, int error);
void trace_freopen(const char* path, const char* mode, const void* stream, const void* result,
                   int fd, int error);
void trace_fclose(const void* stream, int fd, int result);

// Reads the trace_log option and writes the log's first line. Called once at start-up.
void init_trace_log();

// Appends what is buffered. After the final flush (at exit) every line is written at once.
void trace_log_flush();
void trace_log_flush_final();

// fork() support: the parent's buffered lines are written before the fork, so the child
// does not write them again; the child starts its own lines (with its own pid in the file
// name when the name has %p).
void trace_log_fork_prepare();
void trace_log_fork_parent();
void trace_log_fork_child();

}  // namespace memtrack::rt
