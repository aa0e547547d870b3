// The FILE stream entry points, interposed with LD_PRELOAD: fopen, fopen64, fdopen, freopen,
// freopen64, fclose and fcloseall. A stream is tracked by its descriptor (fileno), with the fopen
// mode; with track_fds on, the real function runs in a StdioScope, so glibc's allocation of the
// FILE object is not recorded as the program's memory (fd_tracking.h). Every call is also
// an event of the event log. Return values and errno are the real function's.
// Calls libc (fileno) but never malloc.
#include <errno.h>
#include <stdio.h>

#include "core/fd_names.h"
#include "runtime/fd/fd_paths.h"
#include "runtime/fd/fd_tracking.h"
#include "runtime/hooks/entry.h"
#include "runtime/hooks/export.h"
#include "runtime/hooks/fd_record.h"
#include "runtime/link/real_functions.h"
#include "runtime/output/trace_log.h"
#include "runtime/runtime.h"
#include "runtime/thread_state.h"

namespace {

namespace rt = memtrack::rt;
namespace core = memtrack::core;
using Call = core::result::ResourceCall;

int descriptor_of(FILE* stream) {
  rt::ErrnoKeeper keep;
  return stream != nullptr ? fileno(stream) : -1;
}

// The size of `stream`'s FILE object if the StdioScope just ended allocated it (fopen and
// fdopen allocate it first), 0 if it did not.
uint32_t allocated_object(FILE* stream) {
  return rt::t_thread.stdio_first_block == reinterpret_cast<uintptr_t>(stream)
             ? rt::t_thread.stdio_first_size
             : 0;
}

FILE* open_stream(FILE* (*real)(const char*, const char*), const char* name, const char* path,
                  const char* mode, uintptr_t caller) {
  bool track = rt::fd_tracking(caller);
  FILE* stream;
  {
    rt::StdioScope scope(track);
    stream = real(path, mode);
  }
  bool trace = rt::tracing();
  if (!track && !trace) return stream;
  rt::ErrnoKeeper keep;
  int error = errno;
  int fd = descriptor_of(stream);
  if (track && stream != nullptr) {
    rt::remember_fd_path(fd, path);
    rt::note_open(fd, Call::kFopen, core::open_flags_of_mode(mode), mode, stream,
                  allocated_object(stream));
  }
  if (trace) rt::trace_fopen(name, path, mode, stream, fd, error);
  return stream;
}

// freopen closes the stream's descriptor and opens another (usually with the same number)
// in the same FILE. With a null path it reopens the same file in a new mode, keeping a
// descriptor that was not the program's (stdin, an inherited one) untracked.
FILE* reopen_stream(FILE* (*real)(const char*, const char*, FILE*), const char* path,
                    const char* mode, FILE* stream, uintptr_t caller) {
  bool track = rt::fd_tracking(caller);
  bool was_tracked = false;
  rt::FdInfo old;
  if (track) {
    int old_fd = descriptor_of(stream);
    was_tracked = old_fd >= 0 && rt::forget_fd(old_fd, &old);
  }
  FILE* result;
  {
    rt::StdioScope scope(track);
    result = real(path, mode, stream);
  }
  bool trace = rt::tracing();
  if (!track && !trace) return result;
  rt::ErrnoKeeper keep;
  int error = errno;
  int fd = descriptor_of(result);
  // The FILE object is the same: its size is the old entry's (0 for stdin & co., which live
  // in libc's data, a root anyway).
  bool same_object = was_tracked && old.stream_object == reinterpret_cast<uintptr_t>(result);
  if (track && result != nullptr && (path != nullptr || was_tracked)) {
    if (path != nullptr) rt::remember_fd_path(fd, path);  // null: the same file, kept
    rt::note_open(fd, Call::kFreopen, core::open_flags_of_mode(mode), mode, result,
                  same_object ? old.stream_size : 0);
  }
  if (trace) rt::trace_freopen(path, mode, stream, result, fd, error);
  return result;
}

}  // namespace

MEMTRACK_EXPORT_C FILE* fopen(const char* path, const char* mode) {
  return open_stream(rt::g_lazy_real.fopen.get(), "fopen", path, mode, MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C FILE* fopen64(const char* path, const char* mode) {
  return open_stream(rt::g_lazy_real.fopen64.get(), "fopen", path, mode, MEMTRACK_CALLER);
}

// A stream on a descriptor the program has: from now on the FILE owns it, so the entry
// becomes the stream's, with fdopen's stack (where the FILE that must be closed was made).
// Descriptors memtrack did not see opened (mkstemp, inherited ones) are tracked from here.
MEMTRACK_EXPORT_C FILE* fdopen(int fd, const char* mode) noexcept {
  uintptr_t caller = MEMTRACK_CALLER;
  bool track = rt::fd_tracking(caller);
  FILE* stream;
  {
    rt::StdioScope scope(track);
    stream = rt::g_lazy_real.fdopen.get()(fd, mode);
  }
  bool trace = rt::tracing();
  if (!track && !trace) return stream;
  rt::ErrnoKeeper keep;
  int error = errno;
  if (track && stream != nullptr) {
    rt::note_open(fd, Call::kFdopen, core::open_flags_of_mode(mode), mode, stream,
                  allocated_object(stream));
  }
  if (trace) rt::trace_fdopen(fd, mode, stream, error);
  return stream;
}

MEMTRACK_EXPORT_C FILE* freopen(const char* path, const char* mode, FILE* stream) {
  return reopen_stream(rt::g_lazy_real.freopen.get(), path, mode, stream, MEMTRACK_CALLER);
}

MEMTRACK_EXPORT_C FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  return reopen_stream(rt::g_lazy_real.freopen64.get(), path, mode, stream, MEMTRACK_CALLER);
}

// fclose releases the descriptor even when it fails, so the entry goes first.
MEMTRACK_EXPORT_C int fclose(FILE* stream) {
  bool track = rt::fd_tracking(MEMTRACK_CALLER);
  bool trace = rt::tracing();
  int fd = track || trace ? descriptor_of(stream) : -1;
  if (track && fd >= 0) rt::forget_fd(fd, nullptr);
  int result;
  {
    rt::StdioScope scope(track);
    result = rt::g_lazy_real.fclose.get()(stream);
  }
  if (trace) rt::trace_fclose(stream, fd, result);
  return result;
}

// Closes every stream: their entries go first (their FILE objects are freed).
MEMTRACK_EXPORT_C int fcloseall() {
  bool track = rt::fd_tracking(MEMTRACK_CALLER);
  if (track) {
    rt::RuntimeScope scope;
    rt::g_fds.for_each([](int fd, const rt::FdInfo& info) {
      if (info.stream()) rt::g_fds.erase(fd, nullptr);
    });
  }
  rt::StdioScope scope(track);
  return rt::g_lazy_real.fcloseall.get()();
}
